-- deliver.lua: record delivery ids as written to connections and not yet acked, before their
-- frames are written (so an ack can never arrive for an id the index does not hold yet). An id
-- that was owed (shed) moves from the owed set to the pending set. One call carries a whole
-- fast-path batch: any number of groups, one per connection.
--
-- KEYS[1] wl:cnt   KEYS[2] wl:pins
-- then per group g (from 0): KEYS[3+3g] wl:sess:<user>  KEYS[4+3g] wl:pend:<user>  KEYS[5+3g] wl:shed:<user>
-- ARGV, per group in the same order: session id of the connection, user id, n, then n delivery ids
-- (repin comes from _repin.lua, loaded in front of this script.)
-- Returns per group -1 when its connection is no longer the registered epoch (nothing recorded
-- for it, write nothing), otherwise the user's number of pending ids after the call.
local out = {}
local a = 1
local k = 3
while a <= #ARGV do
  local n = tonumber(ARGV[a + 2])
  if redis.call('GET', KEYS[k]) ~= ARGV[a] then
    out[#out + 1] = -1
  else
    for i = a + 3, a + 2 + n do
      redis.call('ZADD', KEYS[k + 1], ARGV[i], ARGV[i])
      redis.call('ZREM', KEYS[k + 2], ARGV[i])
    end
    out[#out + 1] = repin(KEYS[k + 1], KEYS[k + 2], KEYS[1], KEYS[2], ARGV[a + 1])
  end
  a = a + 3 + n
  k = k + 3
end
return out
