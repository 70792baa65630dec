-- leave.lua: users were seen leaving (a connection closed, or their node left or was declared
-- dead): each is stamped with the time it left and put in the due set at that time plus the
-- debounce, when any node settles it (settle.lua: offline, unless it is back by then). Kept in
-- Redis rather than on the node, so that a node that stops or dies meanwhile loses none.
--
-- KEYS[1] wl:online:due     zset: user -> ms at which it is to be settled
-- KEYS[2..] wl:online:{user} of each user, in ARGV's order
-- ARGV[1] debounce, ms
-- ARGV[2] how long the hash of a user never announced is kept, s
-- ARGV[3..] the users
-- Returns how many users.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 3, #ARGV do
  local key = KEYS[i - 1]
  redis.call('HSET', key, 'left', now)
  if not redis.call('HGET', key, 'state') then
    redis.call('EXPIRE', key, ARGV[2])
  end
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[i])
end
return #ARGV - 2
