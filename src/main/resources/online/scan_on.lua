-- scan_on.lua: one step of a scan of the users announced online (the audit, a single node's start).
--
-- KEYS[1] wl:online:on      set: the users announced online
-- ARGV[1] the cursor (0 to start)
-- ARGV[2] how many to look at
-- Returns {next cursor (0 at the end), {users}}.
return redis.call('SSCAN', KEYS[1], ARGV[1], 'COUNT', ARGV[2])
