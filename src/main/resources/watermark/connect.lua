-- connect.lua: a new connection becomes its user's only live-delivery epoch. Whatever an
-- earlier connection had pending or owed is dropped from the index: that client is gone, the
-- rows stay in the outbox and in history, and the new client resyncs history as it connects.
--
-- KEYS[1] wl:sess:<user>   string: the registered connection's session id (the epoch)
-- KEYS[2] wl:pend:<user>   zset: ids written to the connection and not acked (score = id)
-- KEYS[3] wl:shed:<user>   zset: ids owed to the connection, left to the poller (score = id)
-- KEYS[4] wl:cnt           hash: user -> number of pending ids (what the overload reaper reads)
-- KEYS[5] wl:pins          zset: user -> its pin, the lowest id it has pending or owed
-- ARGV[1] session id of the new connection
-- ARGV[2] user id
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HDEL', KEYS[4], ARGV[2])
redis.call('ZREM', KEYS[5], ARGV[2])
return 1
