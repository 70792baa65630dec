-- locate.lua: where each of these users has its epoch, but only while the index is known to be
-- whole: the poller retires the rows of a user connected nowhere, which is sound only if Redis
-- has not lost anyone's epoch. The caller names PostgreSQL's marker token and generation, and in
-- the cluster the leader's word that every node trusts the index must hold that generation, as
-- in status.lua.
--
-- KEYS[1] wl:marker   KEYS[2] wl:gen   KEYS[3] wl:alltrusted
-- then per user u (from 0), in ARGV's order: KEYS[4+2u] wl:node:{user}   KEYS[5+2u] wl:sess:{user}
-- ARGV[1] the marker token PostgreSQL holds   ARGV[2] the generation
-- ARGV[3] '1' in the cluster (wl:alltrusted must hold the generation), '0' otherwise
-- ARGV[4..] user ids
-- Every key is named in KEYS (one user's two keys share its {user} hash tag; the users' keys and
-- the global ones span slots: one Redis, see WatermarkKeys).
-- Returns {-2} when the index is not known to be whole; otherwise per user, in order, its node
-- and session id ('' and '' when it has no epoch).
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('GET', KEYS[2]) ~= ARGV[2] then
  return {-2}
end
if ARGV[3] == '1' and redis.call('GET', KEYS[3]) ~= ARGV[2] then
  return {-2}
end
local out = {}
for u = 0, #ARGV - 4 do
  out[#out + 1] = redis.call('GET', KEYS[4 + 2 * u]) or ''
  out[#out + 1] = redis.call('GET', KEYS[5 + 2 * u]) or ''
end
return out
