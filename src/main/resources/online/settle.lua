-- settle.lua: compares a user's actual presence with the one last announced, and announces the
-- actual one when it differs and may be announced now (docs/ARCHITECTURE.md "Presence"). An
-- announcement is at most one per debounce, and offline only once the user has been gone for the
-- debounce (a reconnect inside it is no change). When the change must wait, the user is put in the
-- due set at the time it may be announced, and any node settles it then.
--
-- A settle of a due user is judged on a reading of where the user is that the caller made before
-- this script ran; a leave or a deferral stamped since (each raises the hash's version) makes that
-- reading stale: such a settle changes nothing and leaves the newer due entry to its own settle.
--
-- KEYS[1] wl:online:{user}  hash: state (announced: online, offline; absent: never announced, which
--                           reads as offline), at (ms of the announcement), left (ms the user was last
--                           seen leaving), seen (the lastSeen announced with offline), v (the version:
--                           raised by every leave and every deferral)
-- KEYS[2] wl:online:due     zset: user -> ms at which it is to be settled
-- KEYS[3] wl:online:on      set: the users announced online
-- ARGV[1] user id
-- ARGV[2] actual state: online or offline
-- ARGV[3] debounce, ms
-- ARGV[4] how long an offline user's hash is kept, s
-- ARGV[5] the version the caller's reading was made under (due.lua gave it), or '' (a reading
--         that cannot be stale: the user is connected to the caller's node now)
-- Returns {0} nothing to announce, {1, due ms} to be settled again then, {2, state, seen ms or ''}
-- announce this, {3} the reading was stale (a newer due entry stands).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[5] ~= '' and (redis.call('HGET', KEYS[1], 'v') or '0') ~= ARGV[5] then
  return {3}
end
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
  redis.call('HINCRBY', KEYS[1], 'v', 1)
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
