-- POST a point order paid with points, a fresh Idempotency-Key each time. PAYER=<id> makes
-- every order come from one hot payer; unset, payers are random.
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
local hot = os.getenv("PAYER")
local n = 0
request = function()
  n = n + 1
  local payer = hot and tonumber(hot) or math.random(200001, 300000)
  -- Never the payer: an order paid with points to yourself is the spec's 400, not load.
  local friend = payer
  while friend == payer do friend = math.random(200001, 300000) end
  local body = '{"point_offer_id":"' .. string.rep("b", 23) .. '7","to_client_id":' .. friend .. ',"payment_type":"point"}'
  return wrk.format("POST", nil, {
    ["Authorization"] = "Bearer bench-token-" .. payer,
    ["Content-Type"] = "application/json",
    ["Idempotency-Key"] = "wrk-" .. tostring({}):sub(8) .. "-" .. n .. "-" .. math.random(1, 1e9),
  }, body)
end
-- Count non-200 answers, so that errors are reported, not hidden in the rate.
local errors = 0
response = function(status, headers, body)
  if status ~= 200 then errors = errors + 1 end
end
