-- _keys.lua: not a script of its own. The index loads it in front of the scripts that reach a
-- user's keys by name rather than through KEYS (a node's users when it is swept or leaves): the
-- same names WatermarkIndex gives them. Per-user keys carry the user id as a hash tag, so that on
-- Redis Cluster all of one user's keys share a slot.
local function userkey(kind, user)
  return 'wl:' .. kind .. ':{' .. user .. '}'
end
local function nodeusers(node)
  return 'wl:users:' .. node
end
