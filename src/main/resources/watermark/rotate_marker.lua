-- rotate_marker.lua: moves the marker on, but only from the value the caller last saw. A Redis
-- that was flushed or fell back to an older state since then no longer holds it, and the
-- caller learns so here, before it deletes anything on the strength of what it read.
--
-- KEYS[1] wl:marker
-- ARGV[1] the marker the caller expects Redis to hold
-- ARGV[2] the new marker
-- Returns 1 when the marker was moved, 0 when Redis held something else.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
