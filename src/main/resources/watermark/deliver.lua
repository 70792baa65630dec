-- deliver.lua: record delivery ids as written to a connection and not yet acked, before their
-- frames are written (so an ack can never arrive for an id the index does not hold yet). An id
-- that was owed (shed) moves from the owed set to the pending set.
--
-- KEYS[1] wl:sess:<user>   KEYS[2] wl:pend:<user>   KEYS[3] wl:shed:<user>
-- KEYS[4] wl:cnt           KEYS[5] wl:pins
-- ARGV[1] session id of the connection the ids are written to
-- ARGV[2] user id
-- ARGV[3..] delivery ids
-- (repin comes from _repin.lua, loaded in front of this script.)
-- Returns -1 when the connection is no longer the registered epoch (record and write nothing),
-- otherwise the user's number of pending ids after the call.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[2], ARGV[i], ARGV[i])
  redis.call('ZREM', KEYS[3], ARGV[i])
end
return repin(KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[2])
