-- computed_keys.lua: planted for LuaKeysUnitTests, never loaded by Waterline. Each call below
-- touches a key the script builds instead of one named in KEYS, which Redis Cluster forbids.
--
-- KEYS[1] wl:nodes
-- ARGV[1] a node
redis.call('SET', 'wl:dead:' .. ARGV[1], '1')
local trust = 'wl:trust:' .. ARGV[1]
redis.call('DEL', KEYS[1], trust)
local mixed = KEYS[1]
mixed = ARGV[1]
redis.pcall('GET', mixed)
local function drop(key)
  redis.call('DEL', key)
end
drop(KEYS[1])
drop('wl:users:' .. ARGV[1])
return redis.call('ZSCORE', KEYS[1], ARGV[1])
