-- ack.lua: clients confirm delivery ids. Each acked id leaves its pending set, so the pin (the
-- lowest id pending or owed) rises only past ids actually acked: an out-of-order ack never lifts
-- it past a gap. Nothing else ever moves a pin upward but a whole withdrawal or a rebuild
-- (rebuild_user.lua: ids the outbox no longer holds in delivery, or acked). One call carries
-- the acks of many connections: any number of groups, one per acking connection.
-- Each id acked is also kept in the user's acked set until the poller judges its row (status.lua
-- removes it there), so that a rebuild in between does not owe it again (rebuild_user.lua). The
-- set is bounded: at most ACKED_KEPT ids (the highest), and it expires ACKED_TTL seconds after
-- the last ack that acked one of its ids. The leader drops every acked set when Redis is ahead of
-- PostgreSQL (a restored database hands out ids again: Reclaim). An id that falls out early is only written once more by a rebuild, as
-- before the set existed: the set saves repeats, it is never needed for safety.
--
-- KEYS[1] wl:cnt   KEYS[2] wl:pins
-- then per group g (from 0): KEYS[3+4g] wl:sess:<user>  KEYS[4+4g] wl:pend:<user>  KEYS[5+4g] wl:shed:<user>
--                            KEYS[6+4g] wl:ackd:<user>
-- ARGV, per group in the same order: session id of the acking connection, user id, n, then n delivery ids
-- (repin comes from _repin.lua, loaded in front of this script.)
-- Returns per group the number of ids that were pending and are now acked (unknown ids, and
-- every id of a connection that is no longer the registered epoch, are ignored).
local ACKED_KEPT = 4096
local ACKED_TTL = 600
local out = {}
local a = 1
local k = 3
while a <= #ARGV do
  local n = tonumber(ARGV[a + 2])
  local acked = 0
  if redis.call('GET', KEYS[k]) == ARGV[a] then
    for i = a + 3, a + 2 + n do
      if redis.call('ZREM', KEYS[k + 1], ARGV[i]) == 1 then
        acked = acked + 1
        redis.call('ZADD', KEYS[k + 3], ARGV[i], ARGV[i])
      end
    end
    if acked > 0 then
      repin(KEYS[k + 1], KEYS[k + 2], KEYS[1], KEYS[2], ARGV[a + 1])
      redis.call('ZREMRANGEBYRANK', KEYS[k + 3], 0, -(ACKED_KEPT + 1))
      redis.call('EXPIRE', KEYS[k + 3], ACKED_TTL)
    end
  end
  out[#out + 1] = acked
  a = a + 3 + n
  k = k + 4
end
return out
