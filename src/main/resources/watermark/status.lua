-- status.lua: where each of these delivery ids stands for a connection. The poller asks it
-- about the rows it claimed: an owed row is written for the first time, a pending one again,
-- any other is retired (acked; or from before this connection, whose client resynced history
-- when it connected). That last verdict is only sound if the index is whole, so the caller
-- names the marker it trusts, and a Redis that no longer holds it answers {-2}. Changes nothing.
--
-- KEYS[1] wl:sess:<user>   KEYS[2] wl:pend:<user>   KEYS[3] wl:shed:<user>   KEYS[4] wl:marker
-- ARGV[1] session id of the connection
-- ARGV[2] the marker the caller trusts
-- ARGV[3..] delivery ids
-- Returns {-2} when Redis does not hold that marker, {-1} when the connection is no longer the
-- registered epoch, otherwise one status per id: 2 = pending (written, not acked), 1 = owed
-- (never written), 0 = neither.
if redis.call('GET', KEYS[4]) ~= ARGV[2] then
  return {-2}
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {-1}
end
local out = {}
for i = 3, #ARGV do
  if redis.call('ZSCORE', KEYS[2], ARGV[i]) then
    out[#out + 1] = 2
  elseif redis.call('ZSCORE', KEYS[3], ARGV[i]) then
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
