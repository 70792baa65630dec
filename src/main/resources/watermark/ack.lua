-- ack.lua: the client confirms delivery ids. Each acked id leaves the pending set (so the pin,
-- the set's minimum, can rise only past ids actually acked: an out-of-order ack never lifts it
-- past a gap) and is marked acked until the poller retires its outbox row.
--
-- KEYS[1] wl:sess:<user>   KEYS[2] wl:pend:<user>   KEYS[3] wl:acked:<user>
-- KEYS[4] wl:cnt           KEYS[5] wl:pins
-- ARGV[1] session id of the acking connection
-- ARGV[2] user id
-- ARGV[3] seconds the acked marks live at most (a backstop; the poller retires them sooner)
-- ARGV[4..] delivery ids
-- Returns the number of ids that were pending and are now acked (unknown ids are ignored).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local acked = 0
for i = 4, #ARGV do
  local id = ARGV[i]
  if redis.call('ZREM', KEYS[2], id) == 1 then
    redis.call('ZADD', KEYS[3], id, id)
    acked = acked + 1
  end
end
if acked > 0 then
  redis.call('EXPIRE', KEYS[3], ARGV[3])
  local n = redis.call('ZCARD', KEYS[2])
  if n > 0 then
    local low = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    redis.call('HSET', KEYS[4], ARGV[2], n)
    redis.call('ZADD', KEYS[5], low[2], ARGV[2])
  else
    redis.call('HDEL', KEYS[4], ARGV[2])
    redis.call('ZREM', KEYS[5], ARGV[2])
  end
end
return acked
