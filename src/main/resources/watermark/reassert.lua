-- reassert.lua: a delivery path found Redis not naming a connection this node holds as its
-- user's current one. In the single-node mode only Redis can be wrong (it was down when the
-- connection opened, or lost its data): the connection is named again, and what an earlier one
-- had pending or owed is dropped. In the cluster Redis may be right, and cannot tell: another
-- node's newer connection is the epoch (this one is superseded), or the epoch was removed on
-- purpose (a poller elsewhere withdrew the connection and its close was lost; this node was
-- declared dead), or Redis lost it. So the cluster never re-names one: nothing is changed and
-- the caller closes its connection, whose client reconnects and resyncs.
--
-- KEYS[1] wl:sess:{user}   KEYS[2] wl:pend:{user}   KEYS[3] wl:shed:{user}   KEYS[4] wl:node:{user}
-- KEYS[5] wl:cnt           KEYS[6] wl:pins          KEYS[7] wl:users:<node>  KEYS[8] wl:nodes
-- KEYS[9] wl:users:<the earlier node the caller read>
-- ARGV[1] session id of the registered connection
-- ARGV[2] user id
-- ARGV[3] this node
-- ARGV[4] '1' in the cluster, '0' in the single-node mode
-- ARGV[5] the earlier node the caller read from wl:node:{user} ('' when none; KEYS[9] is then not touched)
-- Every key is named in KEYS: the user's keys share the {user} hash tag; the rest are global (one
-- Redis: see WatermarkKeys). Redis Cluster forbids computed key names, so the caller reads the user's node first and
-- names its set here; should the node have changed since (a race), the script changes nothing and
-- answers 'moved', and the caller reads again.
-- Returns 1 when it named the connection, 0 when Redis already did; in the cluster -1 when
-- another connection is the epoch (close it: 4009) and -2 when none is (close it: 1012); -9 when
-- the node moved (read again).
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  return 0
end
if ARGV[4] == '1' then
  if current then
    return -1
  end
  return -2
end
local previousNode = redis.call('GET', KEYS[4]) or ''
if previousNode ~= ARGV[5] then
  return -9
end
if previousNode ~= '' and previousNode ~= ARGV[3] then
  redis.call('SREM', KEYS[9], ARGV[2])
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[4], ARGV[3])
redis.call('SADD', KEYS[7], ARGV[2])
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HDEL', KEYS[5], ARGV[2])
redis.call('ZREM', KEYS[6], ARGV[2])
return 1
