-- The nearest branch of the 10 000-branch brand from a random point in Riyadh.
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
request = function()
  local lat = 24.5 + math.random() * 0.5
  local lon = 46.5 + math.random() * 0.5
  return wrk.format("GET", "/api/v2/client/banners/merchant/9077/nearest-store?latitude=" .. lat .. "&longitude=" .. lon)
end
