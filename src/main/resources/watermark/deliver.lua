-- deliver.lua: record delivery ids as written to a connection and not yet acked, before their
-- frames are written (so an ack can never arrive for an id the index does not hold yet). An id
-- that was owed (shed) moves from the owed set to the pending set.
--
-- KEYS[1] wl:sess:<user>   KEYS[2] wl:pend:<user>   KEYS[3] wl:shed:<user>
-- KEYS[4] wl:cnt           KEYS[5] wl:pins
-- ARGV[1] session id of the connection the ids are written to
-- ARGV[2] user id
-- ARGV[3..] delivery ids
-- Returns -1 when the connection is no longer the registered epoch (record and write nothing),
-- otherwise the user's number of pending ids after the call.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[2], ARGV[i], ARGV[i])
  redis.call('ZREM', KEYS[3], ARGV[i])
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
return n
