-- withdraw_node.lua: a node left (it stopped, or missed its heartbeats and was declared dead):
-- up to ARGV[2] of the users whose epoch is on it leave live delivery, as a withdrawal does
-- (never an ack; history keeps every message; the clients reconnect elsewhere and resync). A
-- user whose epoch has moved to another node meanwhile is only taken out of this node's set.
-- Called until it returns 0. The users' own keys are named here from their ids (_keys.lua), not
-- in KEYS: this script cannot run on Redis Cluster as it is (docs/ARCHITECTURE.md, "Redis keys").
--
-- KEYS[1] wl:users:<node>   KEYS[2] wl:cnt   KEYS[3] wl:pins
-- ARGV[1] the node
-- ARGV[2] how many users at most this call
-- (userkey comes from _keys.lua, loaded in front of this script.)
-- Returns how many users it took from the node's set.
local users = redis.call('SPOP', KEYS[1], ARGV[2])
for _, user in ipairs(users) do
  local node = userkey('node', user)
  if redis.call('GET', node) == ARGV[1] then
    redis.call('DEL', userkey('sess', user), userkey('pend', user), userkey('shed', user), node)
    redis.call('HDEL', KEYS[2], user)
    redis.call('ZREM', KEYS[3], user)
  end
end
return #users
