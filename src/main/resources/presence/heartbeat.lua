-- heartbeat.lua: a node says it is alive (its score in wl:nodes is Redis's own clock, so the
-- nodes' clocks do not matter) and renews, or withdraws, its trust in its part of the index. A
-- node that was declared dead meanwhile (its tombstone is there) is told so and renews nothing:
-- its connections were withdrawn, and it must close them before it joins again.
--
-- KEYS[1] wl:nodes          zset: node -> its last heartbeat, in ms of Redis's clock
-- KEYS[2] wl:dead:<node>    string: the tombstone of a node declared dead
-- KEYS[3] wl:trust:<node>   string: the generation the node trusts its part of the index under (expires)
-- KEYS[4] wl:gen            string: the index's current generation
-- ARGV[1] the node
-- ARGV[2] the generation it trusts, or '' when it does not
-- ARGV[3] how long its trust lives without renewal, in ms
-- ARGV[4] the node timeout, in ms
-- Returns {-1, 0} when the node was declared dead, otherwise {1, live nodes (itself included)}.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {-1, 0}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
if ARGV[2] ~= '' and redis.call('GET', KEYS[4]) == ARGV[2] then
  redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
else
  redis.call('DEL', KEYS[3])
end
return {1, redis.call('ZCOUNT', KEYS[1], now - tonumber(ARGV[4]), '+inf')}
