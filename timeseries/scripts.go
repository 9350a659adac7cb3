package timeseries

import (
	"errors"
	"fmt"

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
  local k = tonumber(ARGV[e + 4])
  local names = {}
  for i = 1, k do names[i] = ARGV[e + 3 + 2 * i] end
  names[k + 1], names[k + 2], names[k + 3] = 's', 'min', 'max'
  local cur = redis.pcall('HMGET', key, unpack(names))
  if failed(cur) then return cur.err end
  for i = 1, k + 3 do
    if cur[i] and not string.match(cur[i], '^%d+$') then return 'not an integer: ' .. names[i] end
  end
  local set = {}
  for i = 1, k do
    set[#set + 1] = names[i]
    set[#set + 1] = string.format('%d', (tonumber(cur[i]) or 0) + tonumber(ARGV[e + 4 + 2 * i]))
  end
  if not cur[k + 2] or tonumber(cur[k + 2]) > tonumber(ARGV[e + 2]) then
    set[#set + 1] = 'min'
    set[#set + 1] = ARGV[e + 2]
  end
  if not cur[k + 3] or tonumber(cur[k + 3]) < tonumber(ARGV[e + 3]) then
    set[#set + 1] = 'max'
    set[#set + 1] = ARGV[e + 3]
  end
  local undo = {key = key, names = names, cur = cur}
  local r = redis.pcall('HSET', key, unpack(set))
  if failed(r) then return r.err, undo end
  r = redis.pcall('HINCRBY', key, 's', ARGV[e + 1])
  if failed(r) then return r.err, undo end
  redis.pcall('EXPIREAT', key, ARGV[e])
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
// KEYS: marker, n count keys, m lat keys[, known]. ARGV: seq, marker
// ttl, n, m, n field/delta pairs, m lat blocks (expireat, sum, min, max,
// k, k field/count pairs)[, f, f key indexes to list, the length of a
// count key's part before its member]. Returns
// {1, refused key indexes..., -created key indexes...}, or {0} for a
// batch applied before; index n+1 means the known set refused, n+1+j lat
// key j. Created keys are reported only without a known key.
var flushScript = redisconn.NewScript("\n" + latLua + `
local seq = tonumber(ARGV[1])
local done = tonumber(redis.call('GET', KEYS[1]) or '0')
if seq <= done then return {0} end
local n, m = tonumber(ARGV[3]), tonumber(ARGV[4])
local out = {1}
-- Keys whose member is listed anyway need no look at whether the write
-- created their hash.
local tail = 5 + 2 * n
for _ = 1, m do tail = tail + 5 + 2 * tonumber(ARGV[tail + 4]) end
local listing = {}
if #KEYS > n + m + 1 then
  for j = 1, tonumber(ARGV[tail]) do listing[tonumber(ARGV[tail + j])] = true end
end
local made = {}
for i = 1, n do
  local key, d = KEYS[i + 1], ARGV[4 + 2 * i]
  local r = redis.pcall('HINCRBY', key, ARGV[3 + 2 * i], d)
  if type(r) == 'table' and r.err then
    if not refused(r.err) then return redis.error_reply(r.err) end
    out[#out + 1] = i
  elseif r == tonumber(d) and not listing[i] and redis.call('HLEN', key) == 1 then
    made[#made + 1] = i
  end
end
local a = 5 + 2 * n
for j = 1, m do
  local e, written = latAdd(KEYS[n + 1 + j], a)
  if e then
    -- Refused before any write: skipped and reported; any other error,
    -- or one after a write, fails the call.
    if written or not refused(e) then return redis.error_reply(e) end
    out[#out + 1] = n + 1 + j
  end
  a = a + 5 + 2 * tonumber(ARGV[a + 4])
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
        out[#out + 1] = n + 1
        break
      end
      members = {}
    end
  end
else
  for _, i in ipairs(made) do out[#out + 1] = -i end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return out
`)

// cmd is the script call of b. listed reports whether this recorder has
// listed a member already; the call is made under r.mu.
func (r *Recorder) cmd(b *batch, listed func(string) bool) redisconn.Cmd {
	keys := make([]string, 0, len(b.Keys)+len(b.Lat)+2)
	keys = append(keys, b.Marker)
	keys = append(keys, b.Keys...)
	args := make([]any, 0, 5+3*len(b.Keys))
	args = append(args, b.Seq, r.markerTTL(), len(b.Keys), len(b.Lat))
	for i := range b.Keys {
		args = append(args, b.Fields[i], b.Deltas[i])
	}
	args = appendLat(args, b.Lat)
	for _, d := range b.Lat {
		keys = append(keys, d.Key)
	}
	if !r.router.IsCluster() {
		keys = append(keys, r.schema.KnownKey())
		args = appendUnlisted(args, b, listed)
		// A count key is the member after this: the script needs no list.
		args = append(args, len(r.schema.MemberKey("")))
	}
	return flushScript.Cmd(keys, args...)
}

// appendUnlisted appends the count, then the 1-based indexes, of b's keys
// whose member this recorder has not listed yet.
func appendUnlisted(args []any, b *batch, listed func(string) bool) []any {
	at := len(args)
	args = append(args, 0)
	for i, m := range b.Members {
		if !listed(m) {
			args = append(args, i+1)
		}
	}
	args[at] = len(args) - at - 1
	return args
}

// appendLat appends the lat blocks of both scripts.
func appendLat(args []any, lat []latDelta) []any {
	for _, d := range lat {
		args = append(args, d.Expire, d.Sum, d.Min, d.Max, len(d.Fields))
		for i, f := range d.Fields {
			args = append(args, f, d.Counts[i])
		}
	}
	return args
}

// markerLife is how long a marker outlives its last batch at least, in
// seconds: a resend comes at most MaxPendingAge later.
func (r *Recorder) markerLife() int64 { return max(r.maxPendingAge*2, 3600) }

// markerTTL is the expiry the scripts set on a marker: a quarter more
// than markerLife, as the node script renews it only every quarter of
// markerLife (see ttlFor).
func (r *Recorder) markerTTL() int64 { return r.markerLife() * 5 / 4 }

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

// scriptReply is a script's answer for one batch: its status (1 applied,
// 0 applied before, 2 abandoned: a node batch fenced because a key was
// not on the node, now or before), the indexes of keys that refused
// their increments (for status 2, the key not on the node, if any) and
// those of count keys whose hash the batch created.
type scriptReply struct {
	status  int64
	refused []int64
	created []int64
}

func parseScriptReply(reply any) (scriptReply, error) {
	vals, err := redis.Int64s(reply, nil)
	if err != nil || len(vals) == 0 {
		return scriptReply{}, fmt.Errorf("unexpected flush script reply %v: %w", reply, err)
	}
	out := scriptReply{status: vals[0]}
	for _, v := range vals[1:] {
		if v < 0 {
			out.created = append(out.created, -v)
		} else {
			out.refused = append(out.refused, v)
		}
	}
	return out, nil
}
