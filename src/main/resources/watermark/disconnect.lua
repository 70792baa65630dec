-- disconnect.lua: a connection leaves live delivery (it closed, or a reaper withdrew it). A
-- no-op unless it is still its user's registered epoch, so a late disconnect never tears down a
-- newer connection's bookkeeping. Never an ack: its ids simply stop holding the line down;
-- history keeps the messages.
--
-- KEYS[1] wl:sess:{user}   KEYS[2] wl:pend:{user}   KEYS[3] wl:shed:{user}   KEYS[4] wl:node:{user}
-- KEYS[5] wl:cnt           KEYS[6] wl:pins
-- ARGV[1] session id of the leaving connection
-- ARGV[2] user id
-- Returns 1 when the epoch was current and removed, 0 otherwise.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local node = redis.call('GET', KEYS[4])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('HDEL', KEYS[5], ARGV[2])
redis.call('ZREM', KEYS[6], ARGV[2])
if node then
  redis.call('SREM', 'wl:users:' .. node, ARGV[2])
end
return 1
