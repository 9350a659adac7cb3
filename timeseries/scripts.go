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
// script's first write when full or a replica, and no later one), so a
// failed call changed nothing and may simply be sent again.
//
// On one server the known set is the last key and the members follow the
// deltas in ARGV, so the counts and their listing land atomically.
//
// KEYS: marker, n count keys[, known]. ARGV: seq, marker ttl, n, n
// field/delta pairs[, n members]. Returns {1, refused key indexes...}, or
// {0} for a batch applied before; index n+1 means the known set refused.
var flushScript = redisconn.NewScript(`
local seq = tonumber(ARGV[1])
local done = tonumber(redis.call('GET', KEYS[1]) or '0')
if seq <= done then return {0} end
local n = tonumber(ARGV[3])
local function refused(e)
  return string.find(e, 'WRONGTYPE', 1, true) or string.find(e, 'not an integer', 1, true)
    or string.find(e, 'overflow', 1, true)
end
local out = {1}
for i = 1, n do
  local r = redis.pcall('HINCRBY', KEYS[i + 1], ARGV[2 + 2 * i], ARGV[3 + 2 * i])
  if type(r) == 'table' and r.err then
    if not refused(r.err) then return redis.error_reply(r.err) end
    out[#out + 1] = i
  end
end
if #KEYS > n + 1 then
  local known = KEYS[n + 2]
  local members, seen = {}, {}
  for j = 4 + 2 * n, #ARGV do
    local m = ARGV[j]
    if not seen[m] then
      seen[m] = true
      members[#members + 1] = 0
      members[#members + 1] = m
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
	keys := make([]string, 0, len(b.Keys)+2)
	keys = append(keys, b.Marker)
	keys = append(keys, b.Keys...)
	args := make([]any, 0, 3+2*len(b.Keys)+len(b.Members))
	args = append(args, b.Seq, max(r.maxPendingAge*2, 3600), len(b.Keys))
	for i := range b.Keys {
		args = append(args, b.Fields[i], b.Deltas[i])
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
