-- GET with the legacy token of a random benchmark client (200001..300000). REPEAT=<n>
-- sends each token n times in a row, as a points screen does (balance, history, offers).
-- CLIENT=<id> sends one client's token every time (the relay rows: the point service
-- behind each hop then answers from its caller cache, so the hop's own cost shows).
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
local repeat_count = tonumber(os.getenv("REPEAT") or "1")
local fixed = tonumber(os.getenv("CLIENT") or "")
local sent, id = 0, 0
request = function()
  if fixed then
    id = fixed
  elseif sent % repeat_count == 0 then
    id = math.random(200001, 300000)
  end
  sent = sent + 1
  return wrk.format("GET", nil, { ["Authorization"] = "Bearer bench-token-" .. id })
end
