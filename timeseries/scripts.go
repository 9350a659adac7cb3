package timeseries

import (
	"errors"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// latLua is the Lua both flush scripts share. latAdd adds to a lat key
// the block of ARGV whose first field (the key's EXPIREAT) is at e:
// expireat, sum, min, max, k, then k bin field/count pairs. The bins and
// count are read (HMGET) and written back added (HSET), the sum added by
// HINCRBY, min and max kept if smaller or larger. It returns an error,
// and, once it has written, what undoes the write ({key, names, cur}:
// the fields and their values before); nil and that on success. refused
// tells an error that concerns the key alone (skipped and reported) from
// one that concerns the call.
const latLua = `local function failed(r) return type(r) == 'table' and r.err end
local function refused(e)
  return string.find(e, 'WRONGTYPE', 1, true) or string.find(e, 'not an integer', 1, true)
    or string.find(e, 'overflow', 1, true)
end
local function latAdd(key, e)
  local k = tonumber(ARGV[e + LAT_BINS])
  local names = {}
  for i = 1, k do names[i] = ARGV[e + LAT_HEAD + 2 * i - 2] end
  names[k + 1], names[k + 2], names[k + 3] = 's', 'min', 'max'
  local cur = redis.pcall('HMGET', key, unpack(names))
  if failed(cur) then return cur.err end
  for i = 1, k + 3 do
    if cur[i] and not string.match(cur[i], '^%d+$') then return 'not an integer: ' .. names[i] end
  end
  local set = {}
  for i = 1, k do
    set[#set + 1] = names[i]
    set[#set + 1] = string.format('%d', (tonumber(cur[i]) or 0) + tonumber(ARGV[e + LAT_HEAD + 2 * i - 1]))
  end
  if not cur[k + 2] or tonumber(cur[k + 2]) > tonumber(ARGV[e + LAT_MIN]) then
    set[#set + 1] = 'min'
    set[#set + 1] = ARGV[e + LAT_MIN]
  end
  if not cur[k + 3] or tonumber(cur[k + 3]) < tonumber(ARGV[e + LAT_MAX]) then
    set[#set + 1] = 'max'
    set[#set + 1] = ARGV[e + LAT_MAX]
  end
  local undo = {key = key, names = names, cur = cur}
  local r = redis.pcall('HSET', key, unpack(set))
  if failed(r) then return r.err, undo end
  r = redis.pcall('HINCRBY', key, 's', ARGV[e + LAT_SUM])
  if failed(r) then return r.err, undo end
  redis.pcall('EXPIREAT', key, ARGV[e + LAT_EXPIREAT])
  return nil, undo
end
`

// flushScript applies one batch unless a batch of the same marker with the
// same or a later seq was applied already. Increments that Redis refuses
// for one key (a value of another type, a field that is not an integer)
// are skipped and reported, so one foreign key cannot hold back the rest.
// Any other error is raised before the first write (Redis refuses a
// script's first write when full or a replica, and no later one; the
// reads before it change nothing), so a failed call changed nothing and
// may simply be sent again.
//
// Durations: each lat key's bins and count are read (HMGET) and written
// back added (HSET): two commands whatever the number of bins, exact as
// long as a count stays below 2⁵³. The sum, in nanoseconds, may not, so
// it is added by HINCRBY; min and max are kept if smaller or larger,
// which the marker makes exactly-once like the rest. EXPIREAT bounds each
// lat key's life to 120 buckets.
//
// known: gets a member only when it may be missing from it: the ones
// ARGV names (never listed by this recorder) and those of hashes this
// call created (an HINCRBY that returned its delta on a hash of one
// field), as the cleaner unlists only empty hashes. On one server the
// known set is the last key and those members are added here, so counts
// and listing land atomically; on a cluster the created keys are
// reported, to be listed once the counts have landed (see listLanded).
//
// On a cluster it sends the batches of slots found moving; node batches
// go by the node script (nodescript.go), under markers of their own.
//
// KEYS: marker, n count keys, m lat keys[, known]. ARGV (its offsets are
// named in protocol.go): seq, marker ttl, n, m, n field/delta pairs, m lat
// blocks (expireat, sum, min, max, k, k field/count pairs)[, f, f key
// indexes to list, the length of a count key's part before its member].
// Returns
// {1, refused key indexes..., -created key indexes...}, or {0} for a
// batch applied before; index n+1 means the known set refused, n+1+j lat
// key j. Created keys are reported only without a known key.
var flushScript = redisconn.NewScript("\n" + protocolLua + latLua + `
local seq = tonumber(ARGV[FLUSH_SEQ])
local done = tonumber(redis.call('GET', KEYS[1]) or '0')
if seq <= done then return {STATUS_SEEN} end
local n, m = tonumber(ARGV[FLUSH_NKEYS]), tonumber(ARGV[FLUSH_NLAT])
local out = {STATUS_APPLIED}
-- Keys whose member is listed anyway need no look at whether the write
-- created their hash.
local tail = FLUSH_HEAD + 1 + 2 * n
for _ = 1, m do tail = tail + lat_len(tail) end
local listing = {}
if #KEYS > n + m + 1 then
  for j = 1, tonumber(ARGV[tail]) do listing[tonumber(ARGV[tail + j])] = true end
end
local made = {}
for i = 1, n do
  local key, d = KEYS[i + 1], ARGV[FLUSH_HEAD + 2 * i]
  local r = redis.pcall('HINCRBY', key, ARGV[FLUSH_HEAD + 2 * i - 1], d)
  if type(r) == 'table' and r.err then
    if not refused(r.err) then return redis.error_reply(r.err) end
    out[#out + 1] = i
  elseif r == tonumber(d) and not listing[i] and redis.call('HLEN', key) == 1 then
    made[#made + 1] = i
  end
end
local a = FLUSH_HEAD + 1 + 2 * n
for j = 1, m do
  local e, written = latAdd(KEYS[n + 1 + j], a)
  if e then
    -- Refused before any write: skipped and reported; any other error,
    -- or one after a write, fails the call.
    if written or not refused(e) then return redis.error_reply(e) end
    out[#out + 1] = lat_ref(n, j)
  end
  a = a + lat_len(a)
end
if #KEYS > n + m + 1 then
  -- Members to list: those ARGV names (never listed by this recorder)
  -- and those of hashes this call created.
  local f = tonumber(ARGV[a])
  local skip = tonumber(ARGV[a + f + 1])
  local list = {}
  for j = 1, f do list[#list + 1] = tonumber(ARGV[a + j]) end
  for _, i in ipairs(made) do list[#list + 1] = i end
  local members, seen = {}, {}
  for x, i in ipairs(list) do
    local mb = string.sub(KEYS[i + 1], skip + 1)
    if not seen[mb] then
      seen[mb] = true
      members[#members + 1] = 0
      members[#members + 1] = mb
    end
    if #members == 1000 or (x == #list and #members > 0) then
      local r = redis.pcall('ZADD', KEYS[n + m + 2], unpack(members))
      if type(r) == 'table' and r.err then
        if not refused(r.err) then return redis.error_reply(r.err) end
        out[#out + 1] = known_ref(n)
        break
      end
      members = {}
    end
  end
else
  for _, i in ipairs(made) do out[#out + 1] = -i end
end
redis.call('SET', KEYS[1], ARGV[FLUSH_SEQ], 'EX', ARGV[FLUSH_TTL])
return out
`)

// markerLife is how long a marker outlives its last batch at least, in
// seconds: a resend comes at most MaxPendingAge later.
func (s *sender) markerLife() int64 { return max(s.maxPendingAge*2, 3600) }

// markerTTL is the expiry the scripts set on a marker: a quarter more
// than markerLife, as the node script renews it only every quarter of
// markerLife (see ttlFor).
func (s *sender) markerTTL() int64 { return s.markerLife() * 5 / 4 }

// notApplied reports whether a failed reply says for sure that the batch
// had no effect: it never left, or Redis answered with an error, which the
// flush script only raises before its first write. A lost connection or a
// WAIT short of replicas leaves the outcome unknown.
func notApplied(rep redisconn.Reply) bool {
	if rep.Unsent {
		return true
	}
	if rep.Value != nil {
		return false // it ran; the error is the WAIT's after it
	}
	var re redis.Error
	return errors.As(rep.Err, &re)
}
