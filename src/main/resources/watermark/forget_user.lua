-- forget_user.lua: part of a node's rebuild. Removes a user that holds a pin but has no
-- connection on the rebuilding node (a leftover of an earlier process of that node) from live
-- delivery: epoch, pending and owed sets, node, count and pin. In the cluster only a user whose
-- epoch Redis places on this node is touched: another node's users are its own to rebuild. Like
-- every withdrawal, never an ack: its messages stay in history.
--
-- KEYS[1] wl:sess:{user}   KEYS[2] wl:pend:{user}   KEYS[3] wl:shed:{user}   KEYS[4] wl:node:{user}
-- KEYS[5] wl:cnt           KEYS[6] wl:pins
-- ARGV[1] user id
-- ARGV[2] the rebuilding node, or '' (the single-node mode: whatever node Redis names)
-- Returns 1 when the user was removed, 0 when it is another node's.
local node = redis.call('GET', KEYS[4])
if ARGV[2] ~= '' and node and node ~= ARGV[2] then
  return 0
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('HDEL', KEYS[5], ARGV[1])
redis.call('ZREM', KEYS[6], ARGV[1])
if node then
  redis.call('SREM', 'wl:users:' .. node, ARGV[1])
end
return 1
