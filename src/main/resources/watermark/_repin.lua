-- _repin.lua: not a script of its own. The index loads it in front of every script that changes
-- a user's pending or owed ids, so they all recompute the count and the pin the same way.
--
-- repin(pend, shed, cnt, pins, user): the count is the pending set's size; the pin is the lowest
-- id pending or owed, written with the score as Redis stored it (a Lua number would print large
-- ids with lost digits); a user with neither leaves the count and the pins.
local function repin(pend, shed, cnt, pins, user)
  local n = redis.call('ZCARD', pend)
  if n > 0 then
    redis.call('HSET', cnt, user, n)
  else
    redis.call('HDEL', cnt, user)
  end
  local low = nil
  local p = redis.call('ZRANGE', pend, 0, 0, 'WITHSCORES')
  if #p > 0 then low = p[2] end
  local s = redis.call('ZRANGE', shed, 0, 0, 'WITHSCORES')
  if #s > 0 and (low == nil or tonumber(s[2]) < tonumber(low)) then low = s[2] end
  if low then
    redis.call('ZADD', pins, low, user)
  else
    redis.call('ZREM', pins, user)
  end
  return n
end
