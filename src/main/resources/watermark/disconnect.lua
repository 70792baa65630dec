-- disconnect.lua: a connection leaves live delivery (it closed, or a reaper withdrew it). A
-- no-op unless it is still its user's registered epoch, so a late disconnect never tears down a
-- newer connection's bookkeeping. Never an ack: its ids simply stop holding the line down;
-- history keeps the messages.
--
-- KEYS[1] wl:sess:{user}   KEYS[2] wl:pend:{user}   KEYS[3] wl:shed:{user}   KEYS[4] wl:node:{user}
-- KEYS[5] wl:cnt           KEYS[6] wl:pins          KEYS[7] wl:users:<the node the caller read>
-- ARGV[1] session id of the leaving connection
-- ARGV[2] user id
-- ARGV[3] the node the caller read from wl:node:{user} ('' when none; KEYS[7] is then not touched)
-- Every key is named in KEYS: the user's keys share the {user} hash tag; wl:cnt, wl:pins and the
-- node's set are global (one Redis: see WatermarkKeys). Redis Cluster forbids computed key names, so the caller reads the user's node first and
-- names its set here; should the node have changed since (a race), the script changes nothing and
-- answers 'moved', and the caller reads again.
-- Returns 1 when the epoch was current and removed, 0 otherwise, -9 when the node moved (read again).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local node = redis.call('GET', KEYS[4]) or ''
if node ~= ARGV[3] then
  return -9
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('HDEL', KEYS[5], ARGV[2])
redis.call('ZREM', KEYS[6], ARGV[2])
if node ~= '' then
  redis.call('SREM', KEYS[7], ARGV[2])
end
return 1
