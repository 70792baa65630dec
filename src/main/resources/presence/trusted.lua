-- trusted.lua: whether every live node trusts its part of the index under a generation (the
-- reclaim leader asks before it deletes or lets the pollers retire anything).
--
-- KEYS[1] wl:nodes
-- ARGV[1] the generation
-- ARGV[2] the node timeout, in ms
-- Returns {live nodes, the nodes among them that do not trust the index under that generation...}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live = redis.call('ZRANGEBYSCORE', KEYS[1], now - tonumber(ARGV[2]), '+inf')
local out = {#live}
for _, node in ipairs(live) do
  if redis.call('GET', 'wl:trust:' .. node) ~= ARGV[1] then
    out[#out + 1] = node
  end
end
return out
