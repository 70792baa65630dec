-- reassert.lua: a delivery path found Redis not naming a connection the registry holds as its
-- user's current one (Redis was down when it connected, or lost its data). Names it, and drops
-- what an earlier connection had pending or owed, but only if Redis still names someone else:
-- if the gateway or a rebuild has named it meanwhile, its fresh records are kept.
--
-- KEYS[1] wl:sess:<user>   KEYS[2] wl:pend:<user>   KEYS[3] wl:shed:<user>
-- KEYS[4] wl:cnt           KEYS[5] wl:pins
-- ARGV[1] session id of the registered connection
-- ARGV[2] user id
-- Returns 1 when it named the connection, 0 when Redis already did.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HDEL', KEYS[4], ARGV[2])
redis.call('ZREM', KEYS[5], ARGV[2])
return 1
