-- ack.lua: the client confirms delivery ids. Each acked id leaves the pending set, so the pin
-- (the lowest id pending or owed) rises only past ids actually acked: an out-of-order ack never
-- lifts it past a gap. Nothing else ever moves a pin upward but a whole withdrawal.
--
-- KEYS[1] wl:sess:<user>   KEYS[2] wl:pend:<user>   KEYS[3] wl:shed:<user>
-- KEYS[4] wl:cnt           KEYS[5] wl:pins
-- ARGV[1] session id of the acking connection
-- ARGV[2] user id
-- ARGV[3..] delivery ids
-- (repin comes from _repin.lua, loaded in front of this script.)
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
repin(KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[2])
return acked
