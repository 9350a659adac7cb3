package timeseries

import (
	"errors"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

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
// On one server the known set is the last key and the members follow the
// deltas in ARGV, so the counts and their listing land atomically.
//
// KEYS: marker, n count keys, m lat keys[, known]. ARGV: seq, marker
// ttl, n, m, n field/delta pairs, m lat blocks (expireat, sum, min, max,
// k, k field/count pairs)[, members]. Returns {1, refused key
// indexes...}, or {0} for a batch applied before; index n+1 means the
// known set refused, n+1+j lat key j.
var flushScript = redisconn.NewScript(`
local seq = tonumber(ARGV[1])
local done = tonumber(redis.call('GET', KEYS[1]) or '0')
if seq <= done then return {0} end
local n, m = tonumber(ARGV[3]), tonumber(ARGV[4])
local function refused(e)
  return string.find(e, 'WRONGTYPE', 1, true) or string.find(e, 'not an integer', 1, true)
    or string.find(e, 'overflow', 1, true)
end
local function durations(key, a, k)
  local names = {}
  for i = 1, k do names[i] = ARGV[a + 3 + 2 * i] end
  names[k + 1], names[k + 2], names[k + 3] = 's', 'min', 'max'
  local cur = redis.pcall('HMGET', key, unpack(names))
  if cur.err then return cur.err end
  for i = 1, k + 3 do
    if cur[i] and not string.match(cur[i], '^%d+$') then return 'not an integer: ' .. names[i] end
  end
  local set = {}
  for i = 1, k do
    set[#set + 1] = names[i]
    set[#set + 1] = string.format('%d', (tonumber(cur[i]) or 0) + tonumber(ARGV[a + 4 + 2 * i]))
  end
  if not cur[k + 2] or tonumber(cur[k + 2]) > tonumber(ARGV[a + 2]) then
    set[#set + 1] = 'min'
    set[#set + 1] = ARGV[a + 2]
  end
  if not cur[k + 3] or tonumber(cur[k + 3]) < tonumber(ARGV[a + 3]) then
    set[#set + 1] = 'max'
    set[#set + 1] = ARGV[a + 3]
  end
  redis.call('HSET', key, unpack(set))
  redis.call('HINCRBY', key, 's', ARGV[a + 1])
  redis.call('EXPIREAT', key, ARGV[a])
end
local out = {1}
for i = 1, n do
  local r = redis.pcall('HINCRBY', KEYS[i + 1], ARGV[3 + 2 * i], ARGV[4 + 2 * i])
  if type(r) == 'table' and r.err then
    if not refused(r.err) then return redis.error_reply(r.err) end
    out[#out + 1] = i
  end
end
local a = 5 + 2 * n
for j = 1, m do
  local k = tonumber(ARGV[a + 4])
  local e = durations(KEYS[n + 1 + j], a, k)
  if e then
    if not refused(e) then return redis.error_reply(e) end
    out[#out + 1] = n + 1 + j
  end
  a = a + 5 + 2 * k
end
if #KEYS > n + m + 1 then
  local known = KEYS[n + m + 2]
  local members, seen = {}, {}
  for j = a, #ARGV do
    local mb = ARGV[j]
    if not seen[mb] then
      seen[mb] = true
      members[#members + 1] = 0
      members[#members + 1] = mb
    end
    if #members == 1000 or (j == #ARGV and #members > 0) then
      local r = redis.pcall('ZADD', known, unpack(members))
      if type(r) == 'table' and r.err then
        if not refused(r.err) then return redis.error_reply(r.err) end
        out[#out + 1] = n + 1
        break
      end
      members = {}
    end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return out
`)

// cmd is the script call of b.
func (r *Recorder) cmd(b *batch) redisconn.Cmd {
	keys := make([]string, 0, len(b.Keys)+len(b.Lat)+2)
	keys = append(keys, b.Marker)
	keys = append(keys, b.Keys...)
	args := make([]any, 0, 4+2*len(b.Keys)+len(b.Members))
	args = append(args, b.Seq, max(r.maxPendingAge*2, 3600), len(b.Keys), len(b.Lat))
	for i := range b.Keys {
		args = append(args, b.Fields[i], b.Deltas[i])
	}
	for _, d := range b.Lat {
		keys = append(keys, d.Key)
		args = append(args, d.Expire, d.Sum, d.Min, d.Max, len(d.Fields))
		for i, f := range d.Fields {
			args = append(args, f, d.Counts[i])
		}
	}
	if !r.router.IsCluster() {
		keys = append(keys, r.schema.KnownKey())
		for _, m := range b.Members {
			args = append(args, m)
		}
	}
	return flushScript.Cmd(keys, args...)
}

// notApplied reports whether a failed reply says for sure that the batch
// had no effect: it never left, or Redis answered with an error, which the
// flush script only raises before its first write. A lost connection or a
// WAIT short of replicas leaves the outcome unknown.
func notApplied(rep redisconn.Reply) bool {
	if rep.Unsent {
		return true
	}
	var re redis.Error
	return errors.As(rep.Err, &re)
}

// refusedIndexes are the indexes of keys that refused their increments
// in a flush script's reply.
func refusedIndexes(reply any) []int64 {
	vals, _ := redis.Int64s(reply, nil)
	if len(vals) < 2 {
		return nil
	}
	return vals[1:]
}
