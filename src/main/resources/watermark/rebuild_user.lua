-- rebuild_user.lua: part of rebuilding the index from the outbox. Names a registered connection
-- as its user's epoch and makes its records agree with the outbox: every row of the user still
-- in delivery (up to the highest id the scan saw) is owed unless already pending, and any
-- pending or owed id up to that highest id that the scan did not find (its row was retired or
-- deleted meanwhile, e.g. left over from an older Redis state) is dropped. Ids above it were
-- recorded after the scan and stay. Conservative: a row that was acked before Redis lost it is
-- simply written and acked once more.
--
-- KEYS[1] wl:sess:<user>   KEYS[2] wl:pend:<user>   KEYS[3] wl:shed:<user>
-- KEYS[4] wl:cnt           KEYS[5] wl:pins
-- ARGV[1] session id of the registered connection
-- ARGV[2] user id
-- ARGV[3] the highest outbox id the scan saw
-- ARGV[4..] the user's delivery ids the scan found in delivery
-- (repin comes from _repin.lua, loaded in front of this script.)
-- Returns 1.
redis.call('SET', KEYS[1], ARGV[1])
local found = {}
for i = 4, #ARGV do
  found[ARGV[i]] = true
end
for _, key in ipairs({KEYS[2], KEYS[3]}) do
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', key, '-inf', ARGV[3])) do
    if not found[id] then
      redis.call('ZREM', key, id)
    end
  end
end
for i = 4, #ARGV do
  if not redis.call('ZSCORE', KEYS[2], ARGV[i]) then
    redis.call('ZADD', KEYS[3], ARGV[i], ARGV[i])
  end
end
repin(KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[2])
return 1
