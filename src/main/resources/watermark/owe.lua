-- owe.lua: record delivery ids as owed to connections without writing them: the fast path had no
-- room, or the rows are for connections on other nodes and are about to be handed over there
-- (if the hand-over is lost, the poller finds them owed and delivers them). An owed id holds the
-- line down like a pending one but does not count against max-pending (the client has not been
-- sent it); when its frame is written it becomes pending. One call carries any number of groups,
-- one per connection.
--
-- KEYS[1] wl:cnt   KEYS[2] wl:pins
-- then per group g (from 0): KEYS[3+3g] wl:sess:{user}  KEYS[4+3g] wl:pend:{user}  KEYS[5+3g] wl:shed:{user}
-- ARGV, per group in the same order: session id of the connection, user id, n, then n delivery ids
-- (repin comes from _repin.lua, loaded in front of this script.)
-- Returns per group -1 when its connection is no longer the registered epoch (nothing recorded),
-- otherwise 1.
local out = {}
local a = 1
local k = 3
while a <= #ARGV do
  local n = tonumber(ARGV[a + 2])
  if redis.call('GET', KEYS[k]) ~= ARGV[a] then
    out[#out + 1] = -1
  else
    for i = a + 3, a + 2 + n do
      if not redis.call('ZSCORE', KEYS[k + 1], ARGV[i]) then
        redis.call('ZADD', KEYS[k + 2], ARGV[i], ARGV[i])
      end
    end
    repin(KEYS[k + 1], KEYS[k + 2], KEYS[1], KEYS[2], ARGV[a + 1])
    out[#out + 1] = 1
  end
  a = a + 3 + n
  k = k + 3
end
return out
