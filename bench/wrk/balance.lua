-- GET with the legacy token of a random benchmark client (200001..300000).
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
request = function()
  local id = math.random(200001, 300000)
  return wrk.format("GET", nil, { ["Authorization"] = "Bearer bench-token-" .. id })
end
