-- ack.lua: clients confirm delivery ids. Each acked id leaves its pending set, so the pin (the
-- lowest id pending or owed) rises only past ids actually acked: an out-of-order ack never lifts
-- it past a gap. Nothing else ever moves a pin upward but a whole withdrawal. One call carries
-- the acks of many connections: any number of groups, one per acking connection.
--
-- KEYS[1] wl:cnt   KEYS[2] wl:pins
-- then per group g (from 0): KEYS[3+3g] wl:sess:<user>  KEYS[4+3g] wl:pend:<user>  KEYS[5+3g] wl:shed:<user>
-- ARGV, per group in the same order: session id of the acking connection, user id, n, then n delivery ids
-- (repin comes from _repin.lua, loaded in front of this script.)
-- Returns per group the number of ids that were pending and are now acked (unknown ids, and
-- every id of a connection that is no longer the registered epoch, are ignored).
local out = {}
local a = 1
local k = 3
while a <= #ARGV do
  local n = tonumber(ARGV[a + 2])
  local acked = 0
  if redis.call('GET', KEYS[k]) == ARGV[a] then
    for i = a + 3, a + 2 + n do
      acked = acked + redis.call('ZREM', KEYS[k + 1], ARGV[i])
    end
    if acked > 0 then
      repin(KEYS[k + 1], KEYS[k + 2], KEYS[1], KEYS[2], ARGV[a + 1])
    end
  end
  out[#out + 1] = acked
  a = a + 3 + n
  k = k + 3
end
return out
