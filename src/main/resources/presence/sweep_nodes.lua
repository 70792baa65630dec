-- sweep_nodes.lua: the reclaim leader declares dead every node whose last heartbeat is older
-- than the node timeout: a tombstone (so that the node, should it wake, knows to close its
-- connections before it joins again), and it leaves wl:nodes and loses its trust. The caller then
-- withdraws its users (withdraw_node.lua) and starts a new generation of the index. The caller
-- names the nodes it read from wl:nodes, and their keys (Redis Cluster forbids computed key
-- names); a node that joined since is fresh, and no concern of this sweep.
--
-- KEYS[1] wl:nodes
-- then per node n (from 0), in ARGV's order: KEYS[2+2n] wl:dead:<node>   KEYS[3+2n] wl:trust:<node>
-- ARGV[1] the node timeout, in ms
-- ARGV[2] how long a tombstone is kept, in seconds
-- ARGV[3..] the nodes the caller read from wl:nodes
-- Every key is named in KEYS (global keys: one Redis, see WatermarkKeys).
-- Returns the nodes declared dead.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local dead = {}
for n = 0, #ARGV - 3 do
  local node = ARGV[3 + n]
  local beat = redis.call('ZSCORE', KEYS[1], node)
  if beat and tonumber(beat) < now - tonumber(ARGV[1]) then
    redis.call('SET', KEYS[2 + 2 * n], '1', 'EX', ARGV[2])
    redis.call('ZREM', KEYS[1], node)
    redis.call('DEL', KEYS[3 + 2 * n])
    dead[#dead + 1] = node
  end
end
return dead
