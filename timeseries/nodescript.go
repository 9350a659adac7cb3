package timeseries

import (
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// nodeScript applies, on one cluster node, the batches of several slots
// that node serves: one call per node and flush instead of one per slot.
// Redis 7 lets a script flagged allow-cross-slot-keys touch keys of any
// slot the node serves, as long as the keys it declares share one slot;
// it declares only the first batch's marker (which routes the call) and
// names every other key in ARGV. The flags also make Redis refuse the
// whole call up front when full or a replica, before any write.
//
// Each batch keeps its own marker and the rule of flushScript: a batch
// whose seq is not above its marker's value was applied before and is
// skipped. The marker is read and set by one SET ... GET; a batch found
// applied before puts back a later value, should one be there. Setting an
// expiry costs a quarter of that SET, so the recorder asks for it only
// every quarter of the marker's guaranteed life (see ttlFor); a marker
// the SET creates gets one at once.
//
// A key whose slot the node no longer serves, or is moving away and no
// longer holds the key, fails its command mid-script ("non local key").
// Redis does not roll a script back, so that batch's own writes are
// undone (HINCRBY back or HDEL what was new, lat fields restored from the
// HMGET), its marker is put back and the batch is reported not applied,
// for the caller to send by the per-slot script, which Redis redirects
// as a whole. Undoing cannot fail that way: a key just written is local,
// and no migration runs during a script. Any other error but a refused
// key is handled the same way, so a call never stops half done.
//
// ARGV: marker ttl, number of batches, then per batch: marker, seq, the
// marker's new ttl or 0 to keep its ttl, n, m,
// f, f indexes of keys whose member is listed anyway (no need to look
// whether the write created their hash), n key/field/delta triples, m lat blocks (key, expireat, sum, min, max,
// k, k field/count pairs). Returns one reply per batch, as flushScript's:
// {status, refused indexes..., -created indexes...}, status 2 for not
// applied.
var nodeScript = redisconn.NewScript(`#!lua flags=allow-cross-slot-keys
local ttl = ARGV[1]
local function failed(r) return type(r) == 'table' and r.err end
local function refused(e)
  return string.find(e, 'WRONGTYPE', 1, true) or string.find(e, 'not an integer', 1, true)
    or string.find(e, 'overflow', 1, true)
end
-- lat adds one lat block at a; it returns an error, or what undoes it.
local function lat(a)
  local key, k = ARGV[a], tonumber(ARGV[a + 5])
  local names = {}
  for i = 1, k do names[i] = ARGV[a + 4 + 2 * i] end
  names[k + 1], names[k + 2], names[k + 3] = 's', 'min', 'max'
  local cur = redis.pcall('HMGET', key, unpack(names))
  if failed(cur) then return cur.err end
  for i = 1, k + 3 do
    if cur[i] and not string.match(cur[i], '^%d+$') then return 'not an integer: ' .. names[i] end
  end
  local set = {}
  for i = 1, k do
    set[#set + 1] = names[i]
    set[#set + 1] = string.format('%d', (tonumber(cur[i]) or 0) + tonumber(ARGV[a + 5 + 2 * i]))
  end
  if not cur[k + 2] or tonumber(cur[k + 2]) > tonumber(ARGV[a + 3]) then
    set[#set + 1] = 'min'
    set[#set + 1] = ARGV[a + 3]
  end
  if not cur[k + 3] or tonumber(cur[k + 3]) < tonumber(ARGV[a + 4]) then
    set[#set + 1] = 'max'
    set[#set + 1] = ARGV[a + 4]
  end
  local undo = {key = key, names = names, cur = cur}
  local r = redis.pcall('HSET', key, unpack(set))
  if failed(r) then return r.err, undo end
  r = redis.pcall('HINCRBY', key, 's', ARGV[a + 2])
  if failed(r) then return r.err, undo end
  redis.pcall('EXPIREAT', key, ARGV[a + 1])
  return nil, undo
end
-- res holds the HINCRBY replies of the batch being applied (false for a
-- refused key) and lats the undo of its lat keys: shared by all batches,
-- so a batch allocates no table per key.
local res, lats, nlat = {}, {}, 0
-- back undoes the first nres count keys of the batch whose keys start at
-- a, and its lat keys, puts its marker back and reports it not applied.
local function back(a, nres, marker, old)
  for i = nres, 1, -1 do
    local r, at = res[i], a + 3 * (i - 1)
    if r then
      local key, field, d = ARGV[at], ARGV[at + 1], tonumber(ARGV[at + 2])
      if r == d then redis.call('HDEL', key, field)
      else redis.call('HINCRBY', key, field, string.format('%d', -d)) end
    end
  end
  for i = nlat, 1, -1 do
    local u = lats[i]
    for j, f in ipairs(u.names) do
      if u.cur[j] then redis.call('HSET', u.key, f, u.cur[j]) else redis.call('HDEL', u.key, f) end
    end
  end
  if old then redis.call('SET', marker, old, 'EX', ttl) else redis.call('DEL', marker) end
  return {2}
end
local APPLIED, BEFORE, MOVED = {1}, {0}, {2}
-- push adds v to a batch's reply, copying the shared APPLIED first.
local function push(out, v)
  if out == APPLIED then out = {1} end
  out[#out + 1] = v
  return out
end
-- batch applies the batch at a, of n count and m lat keys.
local function batch(a, n, m)
  local marker, seq = ARGV[a], tonumber(ARGV[a + 1])
  local old
  if ARGV[a + 2] == '0' then
    old = redis.pcall('SET', marker, ARGV[a + 1], 'KEEPTTL', 'GET')
    if failed(old) then return MOVED end
    if not old then redis.call('EXPIRE', marker, ttl) end
  else
    old = redis.pcall('SET', marker, ARGV[a + 1], 'EX', ARGV[a + 2], 'GET')
    if failed(old) then return MOVED end
  end
  local prev = tonumber(old or '0')
  if seq <= prev then
    if seq < prev then redis.call('SET', marker, old, 'EX', ttl) end
    return BEFORE
  end
  local out = APPLIED
  local f = tonumber(ARGV[a + 5])
  local listing
  if f > 0 then
    listing = {}
    for j = 1, f do listing[tonumber(ARGV[a + 5 + j])] = true end
  end
  a = a + 6 + f
  local keys = a
  nlat = 0
  for i = 1, n do
    local key, d = ARGV[a], ARGV[a + 2]
    local r = redis.pcall('HINCRBY', key, ARGV[a + 1], d)
    if failed(r) then
      if not refused(r.err) then return back(keys, i - 1, marker, old) end
      res[i] = false
      out = push(out, i)
    else
      res[i] = r
      if r == tonumber(d) and not (listing and listing[i]) and redis.call('HLEN', key) == 1 then out = push(out, -i) end
    end
    a = a + 3
  end
  for j = 1, m do
    local e, u = lat(a)
    if u then
      nlat = nlat + 1
      lats[nlat] = u
    end
    if e then
      if u or not refused(e) then return back(keys, n, marker, old) end
      out = push(out, n + 1 + j)
    end
    a = a + 6 + 2 * tonumber(ARGV[a + 5])
  end
  return out
end
local out, a = {}, 3
for b = 1, tonumber(ARGV[2]) do
  local n, m = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  out[b] = batch(a, n, m)
  a = a + 6 + tonumber(ARGV[a + 5]) + 3 * n
  for _ = 1, m do a = a + 6 + 2 * tonumber(ARGV[a + 5]) end
end
return out
`)

// ttlFor is the ttl argument of b's marker in a node script call: the
// marker's ttl when its last renewal was a quarter of markerLife ago or
// more (or unknown), else 0, to keep it. Called under r.mu.
func (r *Recorder) ttlFor(b *batch) int64 {
	now := r.clock.Now().Unix()
	if at, ok := r.markerRenewed[b.Marker]; ok && now-at < r.markerLife()/4 {
		return 0
	}
	b.renewAt = now
	return r.markerTTL()
}

// maxNodeArgs caps the ARGV of one node script call; a node's batches
// beyond it go in further calls of the same pipeline.
const maxNodeArgs = 100_000

// nodeArgs is what batch b adds to a node script call's ARGV.
func nodeArgs(b *batch) int {
	n := 6 + 4*len(b.Keys) // at most every key listed
	for _, d := range b.Lat {
		n += 6 + 2*len(d.Fields)
	}
	return n
}

// nodeCmd is the node script call of batches, all of slots one node
// serves.
// listed reports whether this recorder has listed a member already; the
// call is made under r.mu.
func (r *Recorder) nodeCmd(batches []*batch, listed func(string) bool) redisconn.Cmd {
	size := 2
	for _, b := range batches {
		size += nodeArgs(b)
	}
	args := make([]any, 0, size)
	args = append(args, r.markerTTL(), len(batches))
	for _, b := range batches {
		args = append(args, b.Marker, b.Seq, r.ttlFor(b), len(b.Keys), len(b.Lat))
		args = appendUnlisted(args, b, listed)
		for i, k := range b.Keys {
			args = append(args, k, b.Fields[i], b.Deltas[i])
		}
		for _, d := range b.Lat {
			args = append(args, d.Key)
			args = appendLat(args, []latDelta{d})
		}
	}
	return nodeScript.Cmd([]string{batches[0].Marker}, args...)
}

// nodeReplies splits a node script's reply into one reply per batch.
func nodeReplies(reply any, n int) ([]any, error) {
	vals, err := redis.Values(reply, nil)
	if err != nil || len(vals) != n {
		return nil, fmt.Errorf("unexpected node script reply (%d of %d batches): %v", len(vals), n, err)
	}
	return vals, nil
}
