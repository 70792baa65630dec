-- forget_user.lua: part of rebuilding the index. Removes a user that has no connection in this
-- process (a leftover of an earlier process) from live delivery: epoch, pending and owed sets,
-- count and pin. Like every withdrawal, never an ack: its messages stay in history.
--
-- KEYS[1] wl:sess:<user>   KEYS[2] wl:pend:<user>   KEYS[3] wl:shed:<user>
-- KEYS[4] wl:cnt           KEYS[5] wl:pins
-- ARGV[1] user id
-- Returns 1.
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
return 1
