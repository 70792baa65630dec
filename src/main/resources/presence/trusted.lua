-- trusted.lua: whether every node in wl:nodes trusts its part of the index under a generation
-- (the reclaim leader asks before it deletes or lets the pollers retire anything). Every member
-- counts, however old its heartbeat: a node that missed its heartbeats is swept (its users
-- withdrawn, a new generation) before it stops counting, never merely forgotten. The caller names
-- the nodes it read from wl:nodes, and their trust keys (Redis Cluster forbids computed key
-- names); should wl:nodes hold a node it did not name (one joined since), the script answers {-1}
-- and the caller reads again: no node may go unasked.
--
-- KEYS[1] wl:nodes
-- then per node n (from 0), in ARGV's order: KEYS[2+n] wl:trust:<node>
-- ARGV[1] the generation
-- ARGV[2..] the nodes the caller read from wl:nodes
-- Every key is named in KEYS (global keys: one Redis, see WatermarkKeys).
-- Returns {nodes, the nodes among them that do not trust the index under that generation...},
-- or {-1} (read again).
local out = {0}
for n = 0, #ARGV - 2 do
  local node = ARGV[2 + n]
  if redis.call('ZSCORE', KEYS[1], node) then
    out[1] = out[1] + 1
    if redis.call('GET', KEYS[2 + n]) ~= ARGV[1] then
      out[#out + 1] = node
    end
  end
end
if redis.call('ZCARD', KEYS[1]) ~= out[1] then
  return {-1}
end
return out
