package cleaner

import "github.com/pulse-dev/pulse/internal/redisconn"

// trimLua is the function both trim scripts share: trim(key, cutoff,
// keep) deletes the fields of hash key older than cutoff (a decimal
// string), then the oldest of the rest beyond keep, and returns {fields
// deleted, fields left}, or nil and the error reply of a key it cannot
// read (WRONGTYPE, a slot the node no longer serves). Fields are compared
// as numbers; fields that are not numbers were not written by Pulse and
// are left alone. Converting every field is most of the script's time,
// so a field as long as the cutoff is first compared as a string, which
// for decimal integers of one length is numeric order: one that sorts at
// or after the cutoff is recent, or, if it is not such an integer (say
// "16999e9999", which Pulse never writes), left alone. Emptiness
// follows from the fields read and deleted, so no HLEN is needed; HDEL is
// sent only when something is old. Only a hash holding more than keep
// recent fields (stamped ahead of this clock, say) is sorted.
const trimLua = `
local tn = tonumber
local function trim(key, cs, keep)
  local fields = redis.pcall('HKEYS', key)
  if fields.err then return nil, fields end
  local cutoff = tn(cs)
  -- A field of the cutoff's length that sorts at or after it as a string
  -- is recent (or not an integer, and left alone): most fields need no
  -- conversion.
  local len = cutoff >= 0 and #cs or -1
  local del, kept = {}, 0
  for i = 1, #fields do
    local f = fields[i]
    if #f == len and f >= cs then
      kept = kept + 1
    else
      local t = tn(f)
      if t then
        if t < cutoff then del[#del + 1] = f else kept = kept + 1 end
      end
    end
  end
  if kept > keep then
    local rest = {}
    for i = 1, #fields do
      local t = tn(fields[i])
      if t and t >= cutoff then rest[#rest + 1] = {t, fields[i]} end
    end
    table.sort(rest, function(a, b) return a[1] < b[1] end)
    for i = 1, #rest - keep do del[#del + 1] = rest[i][2] end
  end
  local d = 0
  for i = 1, #del, 1000 do
    local n = redis.pcall('HDEL', key, unpack(del, i, math.min(i + 999, #del)))
    if type(n) == 'table' then return nil, n end
    d = d + n
  end
  return {d, #fields - d}
end
`

// nodeTrimScript trims many hashes of the node it runs on in one call
// (Redis 7). It declares no keys (see redisconn.Script.NodeCmd); a hash
// whose slot the node does not serve, or one of another type, gets its
// error reply in its place and the others are trimmed all the same.
// allow-oom because a full server is when trimming matters most.
//
// ARGV: samples, then a hash key and its cutoff per series.
// Returns per series {fields deleted, fields left} or an error reply.
var nodeTrimScript = redisconn.NewScript(`#!lua flags=allow-cross-slot-keys,allow-oom
` + trimLua + `
local keep = tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV, 2 do
  local res, err = trim(ARGV[i], ARGV[i + 1], keep)
  out[#out + 1] = res or err
end
return out
`)

// keyTrimScript trims one series, for servers older than Redis 7, whose
// scripts take no flags and must declare the key they touch.
//
// KEYS: count hash. ARGV: cutoff, samples.
// Returns {fields deleted, fields left}.
var keyTrimScript = redisconn.NewScript(trimLua + `
local res, err = trim(KEYS[1], ARGV[1], tonumber(ARGV[2]))
if err then return err end
return res
`)

// unlockScript deletes the lock only if it still holds our token.
var unlockScript = redisconn.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)
