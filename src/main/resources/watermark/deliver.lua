-- deliver.lua: record that delivery ids are about to be written to a connection, and say for
-- each whether it should be written. Called before the frame is written, so an ack can never
-- arrive for an id the index does not hold yet.
--
-- KEYS[1] wl:sess:<user>   string: the registered connection's session id
-- KEYS[2] wl:pend:<user>   zset: delivered-but-unacked ids (score = id)
-- KEYS[3] wl:acked:<user>  zset: ids acked but not yet retired by the poller (score = id)
-- KEYS[4] wl:cnt           hash: user -> number of pending ids
-- KEYS[5] wl:pins          zset: user -> its pin (lowest pending id)
-- ARGV[1] session id of the connection that will receive the frames
-- ARGV[2] user id
-- ARGV[3..] delivery ids
-- Returns {-1} when the connection is no longer the registered epoch (write nothing);
-- otherwise one status per id: 0 = already acked (retire it, write nothing; the acked mark is
-- consumed), 1 = first delivery (now pending), 2 = re-delivery of a pending id.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {-1}
end
local out = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  if redis.call('ZREM', KEYS[3], id) == 1 then
    out[#out + 1] = 0
  elseif redis.call('ZSCORE', KEYS[2], id) then
    out[#out + 1] = 2
  else
    redis.call('ZADD', KEYS[2], id, id)
    out[#out + 1] = 1
  end
end
local n = redis.call('ZCARD', KEYS[2])
if n > 0 then
  local low = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  redis.call('HSET', KEYS[4], ARGV[2], n)
  redis.call('ZADD', KEYS[5], low[2], ARGV[2])
end
return out
