-- GET with the legacy token of a random benchmark client (200001..300000). REPEAT=<n>
-- sends each token n times in a row, as a points screen does (balance, history, offers).
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
local repeat_count = tonumber(os.getenv("REPEAT") or "1")
local sent, id = 0, 0
request = function()
  if sent % repeat_count == 0 then id = math.random(200001, 300000) end
  sent = sent + 1
  return wrk.format("GET", nil, { ["Authorization"] = "Bearer bench-token-" .. id })
end
