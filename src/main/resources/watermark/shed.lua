-- shed.lua: record delivery ids as owed to a connection without writing them: the fast path
-- had no room, or the index was rebuilt. An owed id holds the line down like a pending one but
-- does not count against max-pending (the client has not been sent it); the poller writes it
-- when its row falls due, and it then becomes pending.
--
-- KEYS[1] wl:sess:<user>   KEYS[2] wl:pend:<user>   KEYS[3] wl:shed:<user>
-- KEYS[4] wl:cnt           KEYS[5] wl:pins
-- ARGV[1] session id of the connection the ids are owed to
-- ARGV[2] user id
-- ARGV[3..] delivery ids
-- (repin comes from _repin.lua, loaded in front of this script.)
-- Returns -1 when the connection is no longer the registered epoch, otherwise 1.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end
for i = 3, #ARGV do
  if not redis.call('ZSCORE', KEYS[2], ARGV[i]) then
    redis.call('ZADD', KEYS[3], ARGV[i], ARGV[i])
  end
end
repin(KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[2])
return 1
