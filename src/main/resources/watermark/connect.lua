-- connect.lua: a new connection becomes its user's only live-delivery epoch.
-- Whatever the previous connection had pending is dropped from the index: that client is gone,
-- the rows stay in the outbox, and the poller re-delivers them to the new connection.
--
-- KEYS[1] wl:sess:<user>   string: the registered connection's session id
-- KEYS[2] wl:pend:<user>   zset: delivered-but-unacked delivery ids (score = id)
-- KEYS[3] wl:cnt           hash: user -> number of pending ids
-- KEYS[4] wl:pins          zset: user -> its pin (lowest pending id)
-- ARGV[1] session id of the new connection
-- ARGV[2] user id
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
redis.call('HDEL', KEYS[3], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[2])
return 1
