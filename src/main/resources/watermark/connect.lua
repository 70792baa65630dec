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
-- KEYS[8] wl:users:<the earlier node the caller read>
-- ARGV[1] session id of the new connection
-- ARGV[2] user id
-- ARGV[3] the node it is on
-- ARGV[4] the earlier node the caller read from wl:node:{user} ('' when none; KEYS[8] is then not touched)
-- Every key is named in KEYS: the user's keys share the {user} hash tag; wl:cnt, wl:pins and the
-- nodes' sets are global (one Redis: see WatermarkKeys). Redis Cluster forbids computed key names, so the caller reads the user's node first and
-- names its set here; should the node have changed since (a race), the script changes nothing and
-- answers 'moved', and the caller reads again.
-- Returns {earlier session id or '', earlier node or ''}, or {'moved'} (read again).
local previousNode = redis.call('GET', KEYS[4]) or ''
if previousNode ~= ARGV[4] then
  return {'moved'}
end
local previous = redis.call('GET', KEYS[1]) or ''
if previousNode ~= '' and previousNode ~= ARGV[3] then
  redis.call('SREM', KEYS[8], ARGV[2])
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[4], ARGV[3])
redis.call('SADD', KEYS[7], ARGV[2])
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HDEL', KEYS[5], ARGV[2])
redis.call('ZREM', KEYS[6], ARGV[2])
return {previous, previousNode}
