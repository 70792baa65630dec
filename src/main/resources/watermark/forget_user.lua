-- forget_user.lua: part of a node's rebuild. Removes a user that holds a pin but has no
-- connection on the rebuilding node (a leftover of an earlier process of that node) from live
-- delivery: epoch, pending and owed sets, node, count and pin. In the cluster only a user whose
-- epoch Redis places on this node is touched: another node's users are its own to rebuild. Like
-- every withdrawal, never an ack: its messages stay in history.
--
-- KEYS[1] wl:sess:{user}   KEYS[2] wl:pend:{user}   KEYS[3] wl:shed:{user}   KEYS[4] wl:node:{user}
-- KEYS[5] wl:cnt           KEYS[6] wl:pins          KEYS[7] wl:users:<the node the caller read>
-- ARGV[1] user id
-- ARGV[2] the rebuilding node, or '' (the single-node mode: whatever node Redis names)
-- ARGV[3] the node the caller read from wl:node:{user} ('' when none; KEYS[7] is then not touched)
-- Every key is named in KEYS: the user's keys share the {user} hash tag; wl:cnt, wl:pins and the
-- node's set are global (one Redis: see WatermarkKeys). Redis Cluster forbids computed key names, so the caller reads the user's node first and
-- names its set here; should the node have changed since (a race), the script changes nothing and
-- answers 'moved', and the caller reads again.
-- Returns 1 when the user was removed, 0 when it is another node's, -9 when the node moved (read again).
local node = redis.call('GET', KEYS[4]) or ''
if node ~= ARGV[3] then
  return -9
end
if ARGV[2] ~= '' and node ~= '' and node ~= ARGV[2] then
  return 0
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('HDEL', KEYS[5], ARGV[1])
redis.call('ZREM', KEYS[6], ARGV[1])
if node ~= '' then
  redis.call('SREM', KEYS[7], ARGV[1])
end
return 1
