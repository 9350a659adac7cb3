package timeseries

import "github.com/pulse-dev/pulse/internal/redisconn"

// nodeScript applies one node batch: the writes of every slot one
// cluster node serves, guarded by that node's one marker, so a flush costs
// one marker command per node, not one per slot. Redis 7 lets a script
// flagged allow-cross-slot-keys touch keys of any slot the node serves, as
// long as the keys it declares share one slot; it declares only the
// marker, which routes the call (Redis redirects it by the marker), and
// names every other key in ARGV. The flags also make Redis refuse the
// whole call up front when full or a replica, before any write.
//
// The marker holds the last seq of its batches and what became of it: N
// applied, -N abandoned (fenced). It is read and set by one SET ... GET. A
// batch whose seq is not above the marker's was settled before: applied
// ({0}), or abandoned ({2}) when the marker holds exactly -seq; either way
// the marker's value is put back. Setting an expiry costs a quarter of
// that SET, so the recorder asks for it only every quarter of the
// marker's guaranteed life (see ttlFor); a marker the SET creates gets one
// at once.
//
// A key whose slot the node no longer serves, or is moving away and no
// longer holds the key, fails its command mid-script ("non local key").
// Redis does not roll a script back, so the batch's writes are undone
// (HINCRBY back or HDEL what was new, lat fields restored from the
// HMGET), the marker is set to -seq and the batch is reported abandoned
// with the index of the key, {2, i}: all of it applied, or none, and never
// later. Undoing cannot fail that way: a key just written is local, and
// no migration runs during a script. Any other error but a refused key is
// handled the same way, so a call never stops half done.
//
// Why a node batch is applied at most once: the marker key lives on one
// node at a time and moves with its slot (MIGRATE carries its value), and
// the check, the writes and the marker's new value are one script, so the
// first send of batch N and every resend race on the same marker,
// wherever it is, and the first to run decides: applied, or fenced, which
// no later copy can undo. The recorder resends a batch whose reply was
// lost as it is, with the same marker (following its redirections), and
// takes its writes back into a new batch only after a definite answer:
// applied, abandoned, or refused before running. A failover that loses
// the script's effects before they reach a replica loses the marker's
// with them (a script replicates as a whole), so the resend applies again
// and once.
//
// KEYS: marker. ARGV: seq, the marker's ttl, its new ttl or 0 to keep its
// ttl, n, m, f, f indexes of keys whose member is listed anyway (no need
// to look whether the write created their hash), n key/field/delta
// triples, m lat blocks (key, expireat, sum, min, max, k, k field/count
// pairs). Returns flushScript's reply, {status, refused indexes...,
// -created indexes...}, or {2[, index of the key not on the node]}.
var nodeScript = redisconn.NewScript("#!lua flags=allow-cross-slot-keys\n" + protocolLua + latLua + `
local marker, seq, ttl = KEYS[1], tonumber(ARGV[NODE_SEQ]), ARGV[NODE_TTL]
local old
if ARGV[NODE_RENEW] == '0' then
  old = redis.call('SET', marker, ARGV[NODE_SEQ], 'KEEPTTL', 'GET')
  if not old then redis.call('EXPIRE', marker, ttl) end
else
  old = redis.call('SET', marker, ARGV[NODE_SEQ], 'EX', ARGV[NODE_RENEW], 'GET')
end
local prev = tonumber(old or '0') or 0
if seq <= math.abs(prev) then
  if prev ~= seq then redis.call('SET', marker, old, 'EX', ttl) end
  if prev == -seq then return {STATUS_FENCED} end
  return {STATUS_SEEN}
end
-- res holds the HINCRBY replies (false for a refused key), lats the undo
-- of the lat keys written.
local res, lats = {}, {}
-- fence undoes the first nres count keys and the lat keys written, marks
-- the batch abandoned and reports the key at index i not on the node.
local function fence(keys, nres, i)
  for j = nres, 1, -1 do
    local r, at = res[j], keys + 3 * (j - 1)
    if r then
      local key, field, d = ARGV[at], ARGV[at + 1], tonumber(ARGV[at + 2])
      if r == d then redis.call('HDEL', key, field)
      else redis.call('HINCRBY', key, field, string.format('%d', -d)) end
    end
  end
  for j = #lats, 1, -1 do
    local u = lats[j]
    for x, f in ipairs(u.names) do
      if u.cur[x] then redis.call('HSET', u.key, f, u.cur[x]) else redis.call('HDEL', u.key, f) end
    end
  end
  redis.call('SET', marker, -seq, 'EX', ttl)
  return {STATUS_FENCED, i}
end
local n, m, f = tonumber(ARGV[NODE_NKEYS]), tonumber(ARGV[NODE_NLAT]), tonumber(ARGV[NODE_NLISTED])
local out = {STATUS_APPLIED}
local listing = {}
for j = 1, f do listing[tonumber(ARGV[NODE_HEAD + j])] = true end
local a = NODE_HEAD + 1 + f
local keys = a
for i = 1, n do
  local key, d = ARGV[a], ARGV[a + 2]
  local r = redis.pcall('HINCRBY', key, ARGV[a + 1], d)
  if failed(r) then
    if not refused(r.err) then return fence(keys, i - 1, i) end
    res[i] = false
    out[#out + 1] = i
  else
    res[i] = r
    if r == tonumber(d) and not listing[i] and redis.call('HLEN', key) == 1 then out[#out + 1] = -i end
  end
  a = a + 3
end
for j = 1, m do
  local e, u = latAdd(ARGV[a], a + 1)
  if u then lats[#lats + 1] = u end
  if e then
    if u or not refused(e) then return fence(keys, n, lat_ref(n, j)) end
    out[#out + 1] = lat_ref(n, j)
  end
  a = a + 1 + lat_len(a + 1)
end
return out
`)

// ttlFor is the ttl argument of b's marker in a node script call: the
// marker's ttl when its last renewal was a quarter of markerLife ago or
// more (or unknown), else 0, to keep it. Called under s.mu.
func (s *sender) ttlFor(b *batch) int64 {
	now := s.clock.Now().Unix()
	if at, ok := s.markerRenewed[b.Marker]; ok && now-at < s.markerLife()/4 {
		return 0
	}
	b.renewAt = now
	return s.markerTTL()
}

// maxNodeDeltas bounds a node batch as maxBatchDeltas bounds any other
// (a count key is one, a lat key latWeight), so that one node script call
// stays around 100,000 arguments at most; a node's writes beyond it wait
// for the next round of the same flush.
const maxNodeDeltas = 25_000
