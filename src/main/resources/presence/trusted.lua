-- trusted.lua: whether every node in wl:nodes trusts its part of the index under a generation
-- (the reclaim leader asks before it deletes or lets the pollers retire anything). Every member
-- counts, however old its heartbeat: a node that missed its heartbeats is swept (its users
-- withdrawn, a new generation) before it stops counting, never merely forgotten.
--
-- KEYS[1] wl:nodes
-- ARGV[1] the generation
-- Returns {nodes, the nodes among them that do not trust the index under that generation...}.
local live = redis.call('ZRANGE', KEYS[1], 0, -1)
local out = {#live}
for _, node in ipairs(live) do
  if redis.call('GET', 'wl:trust:' .. node) ~= ARGV[1] then
    out[#out + 1] = node
  end
end
return out
