-- connect.lua: a new connection becomes its user's only live-delivery epoch, on its node.
-- Whatever an earlier connection had pending or owed is dropped from the index: that client is
-- gone, the rows stay in the outbox and in history, and the new client resyncs history as it
-- connects. Returns where the earlier epoch was, so that the caller can close it there (4009).
--
-- KEYS[1] wl:sess:{user}   string: the registered connection's session id (the epoch)
-- KEYS[2] wl:pend:{user}   zset: ids written to the connection and not acked (score = id)
-- KEYS[3] wl:shed:{user}   zset: ids owed to the connection, not yet written (score = id)
-- KEYS[4] wl:node:{user}   string: the node that holds the epoch
-- KEYS[5] wl:cnt           hash: user -> number of pending ids (what the overload reaper reads)
-- KEYS[6] wl:pins          zset: user -> its pin, the lowest id it has pending or owed
-- KEYS[7] wl:users:<node>  set: the users whose epoch is on this node (for a sweep of the node)
-- ARGV[1] session id of the new connection
-- ARGV[2] user id
-- ARGV[3] the node it is on
-- The earlier node's set (wl:users:<earlier node>) is named here, not in KEYS: a global key,
-- like wl:cnt and wl:pins (docs/ARCHITECTURE.md, "Redis keys").
-- Returns {earlier session id or '', earlier node or ''}.
local previous = redis.call('GET', KEYS[1]) or ''
local previousNode = redis.call('GET', KEYS[4]) or ''
if previousNode ~= '' and previousNode ~= ARGV[3] then
  redis.call('SREM', 'wl:users:' .. previousNode, ARGV[2])
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[4], ARGV[3])
redis.call('SADD', KEYS[7], ARGV[2])
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HDEL', KEYS[5], ARGV[2])
redis.call('ZREM', KEYS[6], ARGV[2])
return {previous, previousNode}
