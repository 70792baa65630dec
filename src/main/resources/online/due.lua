-- due.lua: takes up to a page of the users whose settle is due, for this node to settle. Each is
-- not removed but moved a lease ahead: settle.lua removes it (or sets it later); should this node
-- die first, another takes it once the lease ends. The caller then reads each user's version
-- (their hashes cannot be named here before the page is read) before it looks where they are.
--
-- KEYS[1] wl:online:due     zset: user -> ms at which it is to be settled
-- ARGV[1] most users to take
-- ARGV[2] the lease, ms
-- Returns the users taken.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local users = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
for _, user in ipairs(users) do
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), user)
end
return users
