-- rebuild_user.lua: part of a node's rebuild of its part of the index from the outbox. Names a
-- connection the node holds as its user's epoch and makes its records agree with the outbox:
-- every row of the user still in delivery (up to the highest id the scan saw) is owed unless
-- already pending, and any pending or owed id up to that highest id that the scan did not find
-- (its row was retired or deleted meanwhile, e.g. left over from an older Redis state) is
-- dropped. Ids above it were recorded after the scan and stay. A row the user acked whose
-- retirement the poller has not reached yet is in the user's acked set (ack.lua) and is not owed;
-- acked ids up to that highest id that the scan did not find (retired meanwhile) leave the set.
-- Conservative where Redis lost the set too (a flush, a restart without its file): such a row is
-- simply written and acked once more. In the cluster only a connection
-- Redis still names, on a node Redis counts alive, is rebuilt: one it does not name was
-- superseded, or withdrawn on purpose, or lost with Redis's data, and reassert.lua explains why
-- none of these may be named again; the caller closes it, and its client resyncs.
--
-- KEYS[1] wl:sess:{user}   KEYS[2] wl:pend:{user}   KEYS[3] wl:shed:{user}   KEYS[4] wl:node:{user}
-- KEYS[5] wl:cnt           KEYS[6] wl:pins          KEYS[7] wl:users:<node>  KEYS[8] wl:nodes
-- KEYS[9] wl:ackd:{user}   KEYS[10] wl:users:<the earlier node the caller read>
-- ARGV[1] session id of the connection
-- ARGV[2] user id
-- ARGV[3] this node
-- ARGV[4] '1' in the cluster, '0' in the single-node mode
-- ARGV[5] the highest outbox id the scan saw
-- ARGV[6] the earlier node the caller read from wl:node:{user} ('' when none; KEYS[10] is then not touched)
-- ARGV[7..] the user's delivery ids the scan found in delivery
-- (repin comes from _repin.lua, loaded in front of this script.)
-- Every key is named in KEYS: the user's keys share the {user} hash tag; the rest are global (one
-- Redis: see WatermarkKeys). Redis Cluster forbids computed key names, so the caller reads the user's node first and
-- names its set here; should the node have changed since (a race), the script changes nothing and
-- answers 'moved', and the caller reads again.
-- Returns 1; in the cluster -1 when another connection is the epoch (close it: 4009) and -2 when
-- none is, or this node is not alive (close it: 1012); -9 when the node moved (read again).
if ARGV[4] == '1' then
  local current = redis.call('GET', KEYS[1])
  if current and current ~= ARGV[1] then
    return -1
  end
  if not current or not redis.call('ZSCORE', KEYS[8], ARGV[3]) then
    return -2
  end
end
local previousNode = redis.call('GET', KEYS[4]) or ''
if previousNode ~= ARGV[6] then
  return -9
end
if previousNode ~= '' and previousNode ~= ARGV[3] then
  redis.call('SREM', KEYS[10], ARGV[2])
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[4], ARGV[3])
redis.call('SADD', KEYS[7], ARGV[2])
local found = {}
for i = 7, #ARGV do
  found[ARGV[i]] = true
end
for _, key in ipairs({KEYS[2], KEYS[3], KEYS[9]}) do
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', key, '-inf', ARGV[5])) do
    if not found[id] then
      redis.call('ZREM', key, id)
    end
  end
end
for i = 7, #ARGV do
  if not redis.call('ZSCORE', KEYS[2], ARGV[i]) and not redis.call('ZSCORE', KEYS[9], ARGV[i]) then
    redis.call('ZADD', KEYS[3], ARGV[i], ARGV[i])
  end
end
repin(KEYS[2], KEYS[3], KEYS[5], KEYS[6], ARGV[2])
return 1
