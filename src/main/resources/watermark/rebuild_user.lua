-- rebuild_user.lua: part of rebuilding the index from the outbox. Names a registered connection
-- as its user's epoch and records every outbox row still in delivery for that user as owed
-- (unless already pending). Conservative on purpose: a row that was acked before Redis lost it
-- is simply written and acked once more.
--
-- KEYS[1] wl:sess:<user>   KEYS[2] wl:pend:<user>   KEYS[3] wl:shed:<user>
-- KEYS[4] wl:cnt           KEYS[5] wl:pins
-- ARGV[1] session id of the registered connection
-- ARGV[2] user id
-- ARGV[3..] delivery ids
-- Returns 1.
redis.call('SET', KEYS[1], ARGV[1])
for i = 3, #ARGV do
  if not redis.call('ZSCORE', KEYS[2], ARGV[i]) then
    redis.call('ZADD', KEYS[3], ARGV[i], ARGV[i])
  end
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
return 1
