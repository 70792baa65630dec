-- status.lua: where each of these delivery ids stands for a connection. The poller asks it
-- about the rows it claimed: an owed row is written for the first time, a pending one again, any
-- other is retired (acked; or from before this connection, whose client resynced history when it
-- connected). That last verdict is only sound if the index is whole: the caller names the marker
-- token PostgreSQL holds and the generation its node trusts, and a Redis that holds others (it
-- lost or rolled back data since) answers {-2}. In the cluster the index is whole only while the
-- reclaim leader has lately found every node trusted under that generation (wl:alltrusted, which
-- it renews every pass and which expires on its own): a node that could not record a delivery, or
-- hand one to another node, holds every poller's retirements back. Changes nothing but the
-- user's acked set (ack.lua): an id judged neither leaves it, its row being retired now (should
-- the retirement fail, a rebuild writes that row once more: a repeat, never a loss).
--
-- KEYS[1] wl:sess:{user}   KEYS[2] wl:pend:{user}   KEYS[3] wl:shed:{user}
-- KEYS[4] wl:marker        KEYS[5] wl:gen           KEYS[6] wl:alltrusted   KEYS[7] wl:ackd:{user}
-- ARGV[1] session id of the connection
-- ARGV[2] the marker token PostgreSQL holds
-- ARGV[3] the generation the caller's node trusts
-- ARGV[4] '1' in the cluster (wl:alltrusted must hold the generation), '0' in the single-node mode
-- ARGV[5..] delivery ids
-- Returns {-2} when the index is not known to be whole, {-1} when the connection is no longer the
-- registered epoch, otherwise one status per id: 2 = pending (written, not acked), 1 = owed
-- (never written), 0 = neither.
if redis.call('GET', KEYS[4]) ~= ARGV[2] or redis.call('GET', KEYS[5]) ~= ARGV[3] then
  return {-2}
end
if ARGV[4] == '1' and redis.call('GET', KEYS[6]) ~= ARGV[3] then
  return {-2}
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {-1}
end
local out = {}
for i = 5, #ARGV do
  if redis.call('ZSCORE', KEYS[2], ARGV[i]) then
    out[#out + 1] = 2
  elseif redis.call('ZSCORE', KEYS[3], ARGV[i]) then
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
    redis.call('ZREM', KEYS[7], ARGV[i])
  end
end
return out
