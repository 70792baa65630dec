-- ack.lua: the client confirms delivery ids. Each acked id leaves the pending set, so the pin
-- (the lowest id pending or owed) rises only past ids actually acked: an out-of-order ack never
-- lifts it past a gap. Nothing else ever moves a pin upward but a whole withdrawal.
--
-- KEYS[1] wl:sess:<user>   KEYS[2] wl:pend:<user>   KEYS[3] wl:shed:<user>
-- KEYS[4] wl:cnt           KEYS[5] wl:pins
-- ARGV[1] session id of the acking connection
-- ARGV[2] user id
-- ARGV[3..] delivery ids
-- Returns the number of ids that were pending and are now acked (unknown ids are ignored).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local acked = 0
for i = 3, #ARGV do
  acked = acked + redis.call('ZREM', KEYS[2], ARGV[i])
end
if acked == 0 then
  return 0
end
-- the count is the pending set's size; the pin the lowest id pending or owed
local n = redis.call('ZCARD', KEYS[2])
if n > 0 then
  redis.call('HSET', KEYS[4], ARGV[2], n)
else
  redis.call('HDEL', KEYS[4], ARGV[2])
end
local low = nil
local p = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #p > 0 then low = p[2] end
local s = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
if #s > 0 and (low == nil or tonumber(s[2]) < tonumber(low)) then low = s[2] end
if low then
  -- the score as Redis wrote it: a Lua number would print large ids with lost digits
  redis.call('ZADD', KEYS[5], low, ARGV[2])
else
  redis.call('ZREM', KEYS[5], ARGV[2])
end
return acked
