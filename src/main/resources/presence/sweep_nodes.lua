-- sweep_nodes.lua: the reclaim leader declares dead every node whose last heartbeat is older
-- than the node timeout: a tombstone (so that the node, should it wake, knows to close its
-- connections before it joins again), and it leaves wl:nodes and loses its trust. The caller then
-- withdraws its users (withdraw_node.lua) and starts a new generation of the index.
--
-- KEYS[1] wl:nodes
-- ARGV[1] the node timeout, in ms
-- ARGV[2] how long a tombstone is kept, in seconds
-- Returns the nodes declared dead.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[1])))
for _, node in ipairs(dead) do
  redis.call('SET', 'wl:dead:' .. node, '1', 'EX', ARGV[2])
  redis.call('ZREM', KEYS[1], node)
  redis.call('DEL', 'wl:trust:' .. node)
end
return dead
