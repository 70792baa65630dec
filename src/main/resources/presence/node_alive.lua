-- node_alive.lua: whether a node's last heartbeat is within the node timeout (a new connection
-- does not wait for a dead node to close its user's older connection).
--
-- KEYS[1] wl:nodes
-- ARGV[1] the node   ARGV[2] the node timeout, in ms
-- Returns 1 when alive, 0 otherwise.
local beat = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not beat then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if tonumber(beat) < now - tonumber(ARGV[2]) then
  return 0
end
return 1
