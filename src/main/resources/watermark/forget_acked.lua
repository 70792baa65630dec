-- forget_acked.lua: the poller retired these rows while their recipient was offline; drop any
-- acked marks they still have so the set stays as small as the outbox's live part.
--
-- KEYS[1] wl:acked:<user>
-- ARGV[1..] delivery ids
-- Returns the number of marks removed.
return redis.call('ZREM', KEYS[1], unpack(ARGV))
