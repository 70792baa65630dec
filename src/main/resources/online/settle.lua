-- settle.lua: compares a user's actual presence with the one last announced, and announces the
-- actual one when it differs and may be announced now (docs/ARCHITECTURE.md "Presence"). An
-- announcement is at most one per debounce, and offline only once the user has been gone for the
-- debounce (a reconnect inside it is no change). When the change must wait, the user is put in the
-- due set at the time it may be announced, and any node settles it then.
--
-- KEYS[1] wl:online:{user}  hash: state (announced: online, offline; absent: never announced, which
--                           reads as offline), at (ms of the announcement), left (ms the user was last
--                           seen leaving), seen (the lastSeen announced with offline)
-- KEYS[2] wl:online:due     zset: user -> ms at which it is to be settled
-- KEYS[3] wl:online:on      set: the users announced online (what a restarted single node settles)
-- ARGV[1] user id
-- ARGV[2] actual state: online or offline
-- ARGV[3] debounce, ms
-- ARGV[4] how long an offline user's hash is kept, s
-- Returns {0} nothing to announce, {1, due ms} to be settled again then, {2, state, seen ms or ''}
-- announce this.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local debounce = tonumber(ARGV[3])
local state = redis.call('HGET', KEYS[1], 'state') or 'offline'
if state == ARGV[2] then
  if state == 'online' then
    redis.call('HDEL', KEYS[1], 'left')
  end
  redis.call('ZREM', KEYS[2], ARGV[1])
  return {0}
end
local due = (tonumber(redis.call('HGET', KEYS[1], 'at')) or 0) + debounce
local left = tonumber(redis.call('HGET', KEYS[1], 'left'))
if ARGV[2] == 'offline' then
  if not left then
    left = now
    redis.call('HSET', KEYS[1], 'left', left)
  end
  due = math.max(due, left + debounce)
end
if now < due then
  redis.call('ZADD', KEYS[2], due, ARGV[1])
  return {1, tostring(due)}
end
redis.call('ZREM', KEYS[2], ARGV[1])
if ARGV[2] == 'online' then
  redis.call('HSET', KEYS[1], 'state', 'online', 'at', now)
  redis.call('HDEL', KEYS[1], 'left')
  redis.call('PERSIST', KEYS[1])
  redis.call('SADD', KEYS[3], ARGV[1])
  return {2, 'online', ''}
end
redis.call('HSET', KEYS[1], 'state', 'offline', 'at', now, 'seen', left)
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('SREM', KEYS[3], ARGV[1])
return {2, 'offline', tostring(left)}
