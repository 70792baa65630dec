-- set_generation.lua: the reclaim leader starts a new generation of the index, after writing it
-- to PostgreSQL: Redis gets the new marker token and generation, and loses the leader's word that
-- every node is trusted and any node's request for a new generation (this is it). Every node
-- then rebuilds its part under the new generation before it is trusted again.
--
-- KEYS[1] wl:marker   KEYS[2] wl:gen   KEYS[3] wl:alltrusted   KEYS[4] wl:rebuild
-- ARGV[1] the new marker token
-- ARGV[2] the new generation
-- Returns 1.
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[3], KEYS[4])
return 1
