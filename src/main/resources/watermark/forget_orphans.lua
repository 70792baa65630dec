-- forget_orphans.lua: after a new generation, the reclaim leader removes from live delivery the
-- pinned users whose epoch Redis places on no node in wl:nodes (or on none at all): left over
-- from a Redis state older than the nodes' (a rollback), or from a node whose sweep was lost.
-- Their pins would hold the line down forever, and no node rebuilds them. A node counts as long
-- as it is in wl:nodes, however old its heartbeat: one that missed its heartbeats is the sweep's
-- (which leaves a tombstone, so that the node closes its connections should it wake), never
-- this script's. Walks the pins a page at a time. The users' own keys are named from their ids
-- (_keys.lua), as in withdraw_node.lua.
--
-- KEYS[1] wl:pins   KEYS[2] wl:nodes   KEYS[3] wl:cnt
-- ARGV[1] first rank of the page   ARGV[2] page size
-- (userkey and nodeusers come from _keys.lua, loaded in front of this script.)
-- Returns {users in the page, users removed}.
local page = redis.call('ZRANGE', KEYS[1], ARGV[1], tonumber(ARGV[1]) + tonumber(ARGV[2]) - 1)
local removed = 0
for _, user in ipairs(page) do
  local node = redis.call('GET', userkey('node', user))
  if not node or not redis.call('ZSCORE', KEYS[2], node) then
    redis.call('DEL', userkey('sess', user), userkey('pend', user), userkey('shed', user), userkey('node', user))
    redis.call('HDEL', KEYS[3], user)
    redis.call('ZREM', KEYS[1], user)
    if node then
      redis.call('SREM', nodeusers(node), user)
    end
    removed = removed + 1
  end
end
return {#page, removed}
