-- forget_orphans.lua: after a new generation, the reclaim leader removes from live delivery the
-- pinned users whose epoch Redis places on no node in wl:nodes (or on none at all): left over
-- from a Redis state older than the nodes' (a rollback), or from a node whose sweep was lost.
-- Their pins would hold the line down forever, and no node rebuilds them. A node counts as long
-- as it is in wl:nodes, however old its heartbeat: one that missed its heartbeats is the sweep's
-- (which leaves a tombstone, so that the node closes its connections should it wake), never
-- this script's. The caller walks the pins a page at a time and, per user of the page, reads the
-- node Redis places it on; a user whose node changed since, or who holds no pin any more, is left
-- for the next walk.
--
-- KEYS[1] wl:pins   KEYS[2] wl:nodes   KEYS[3] wl:cnt
-- then per user u (from 0), in ARGV's order: KEYS[4+5u] wl:node:{user}   KEYS[5+5u] wl:sess:{user}
--     KEYS[6+5u] wl:pend:{user}   KEYS[7+5u] wl:shed:{user}   KEYS[8+5u] wl:users:<the node read>
-- ARGV, per user in the same order: user id, the node the caller read ('' when none; its set is then not touched)
-- Every key is named in KEYS (one user's keys share its {user} hash tag; the rest are global: one
-- Redis, see WatermarkKeys).
-- Returns {how many users it removed, how many of the page held no pin any more} (the caller's
-- walk goes on by rank: both have left the ranks below the page's end).
local removed = 0
local vanished = 0
local u = 0
for a = 1, #ARGV, 2 do
  local k = 4 + 5 * u
  local user = ARGV[a]
  local node = redis.call('GET', KEYS[k]) or ''
  local pinned = redis.call('ZSCORE', KEYS[1], user)
  if not pinned then
    vanished = vanished + 1
  elseif node == ARGV[a + 1] and (node == '' or not redis.call('ZSCORE', KEYS[2], node)) then
    redis.call('DEL', KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k])
    redis.call('HDEL', KEYS[3], user)
    redis.call('ZREM', KEYS[1], user)
    if node ~= '' then
      redis.call('SREM', KEYS[k + 4], user)
    end
    removed = removed + 1
  end
  u = u + 1
end
return {removed, vanished}
