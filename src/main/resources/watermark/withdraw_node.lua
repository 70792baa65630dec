-- withdraw_node.lua: a node left (it stopped, or missed its heartbeats and was declared dead):
-- the users the caller read from its set (at most a page) leave live delivery, as a withdrawal
-- does (never an ack; history keeps every message; the clients reconnect elsewhere and resync).
-- A user whose epoch has moved to another node meanwhile is only taken out of this node's set; a
-- user no longer in the set (taken meanwhile) is left alone. The caller reads the set again and
-- calls again until it is empty.
--
-- KEYS[1] wl:users:<node>   KEYS[2] wl:cnt   KEYS[3] wl:pins
-- then per user u (from 0), in ARGV's order: KEYS[4+4u] wl:node:{user}   KEYS[5+4u] wl:sess:{user}
--                                            KEYS[6+4u] wl:pend:{user}   KEYS[7+4u] wl:shed:{user}
-- ARGV[1] the node
-- ARGV[2..] the users the caller read from wl:users:<node>
-- Every key is named in KEYS (one user's keys share its {user} hash tag; the rest are global: one
-- Redis, see WatermarkKeys).
-- Returns how many users it took from the node's set.
local taken = 0
for u = 0, #ARGV - 2 do
  local user = ARGV[2 + u]
  local k = 4 + 4 * u
  if redis.call('SREM', KEYS[1], user) == 1 then
    taken = taken + 1
    if redis.call('GET', KEYS[k]) == ARGV[1] then
      redis.call('DEL', KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k])
      redis.call('HDEL', KEYS[2], user)
      redis.call('ZREM', KEYS[3], user)
    end
  end
end
return taken
