-- leave.lua: users were seen leaving (a connection closed, or their node left or was declared
-- dead), or found announced online with no session anywhere (the audit): each is stamped with the
-- time it left, its version raised, and put in the due set at that time plus the debounce, when
-- any node settles it (settle.lua: offline, unless it is back by then). Kept in Redis rather than
-- on the node, so that a node that stops or dies meanwhile loses none.
--
-- KEYS[1] wl:online:due     zset: user -> ms at which it is to be settled
-- KEYS[2..] wl:online:{user} of each user, in ARGV's order
-- ARGV[1] debounce, ms
-- ARGV[2] how long the hash of a user never announced is kept, s
-- ARGV[3] 'audit': only users with no due entry (a leave already stamped keeps its time); else ''
-- ARGV[4..] the users
-- Returns how many users were stamped.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local stamped = 0
for i = 4, #ARGV do
  local key = KEYS[i - 2]
  if ARGV[3] ~= 'audit' or not redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('HSET', key, 'left', now)
    redis.call('HINCRBY', key, 'v', 1)
    if not redis.call('HGET', key, 'state') then
      redis.call('EXPIRE', key, ARGV[2])
    end
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[i])
    stamped = stamped + 1
  end
end
return stamped
