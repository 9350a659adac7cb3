package redisstore

import (
	"errors"
	"strconv"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// The compact layout keeps many entities of a kind in one small hash, a
// bucket: BucketSize consecutive ids, one field each (the id's offset in
// the bucket, which the listpack stores as a small integer), whose value
// packs all of the entity's counts. A bucket stays listpack-encoded under
// Redis's default limits (128 entries, values up to 64 bytes), so the
// per-key cost is shared by its entities.
//
// A field present means the entity is cached (cold and zero stay apart:
// an all-zero entity is an empty value, not a missing field). Bucketed
// fields cannot expire one by one, so each bucket has two generations: a
// young hash and an old one. Every script that touches a bucket first
// rotates it when its young hash is older than a period (the young hash
// replaces the old, dropping what nobody touched for a whole period), and
// an entity found in the old hash moves to the young one. Memory thus
// follows the entities touched within the last one or two periods.

// BucketSize is how many consecutive ids share a bucket: one entry fewer
// than Redis's default hash-max-listpack-entries, which leaves room for
// the young hash's birth time.
const BucketSize = 127

// Bucket names the keys of one entity in the compact or sparse layout.
// All share the bucket's hash tag, so they live in one Redis Cluster slot.
type Bucket struct {
	Young, Old   string // the bucket's two generations
	Field        string // the entity's field in them
	Lease, Marks string // the entity's warm-up lease and write marks
}

// Bucket names the keys of entity (kind, id) in the compact layout.
func (k Keys) Bucket(kind string, id int64) Bucket {
	b := id / BucketSize
	off := id - b*BucketSize
	if off < 0 { // floor division, so every offset is 0..BucketSize-1
		b--
		off += BucketSize
	}
	young := k.prefix + "pulse:ec:{" + kind + ":" + strconv.FormatInt(b, 10) + "}"
	f := strconv.FormatInt(off, 10)
	return Bucket{Young: young, Old: young + ":old", Field: f, Lease: young + ":l" + f, Marks: young + ":w" + f}
}

// compactPrelude is shared by the compact scripts. KEYS[1] and KEYS[2] are
// the young and old hashes; ARGV[1..4] are now (s, callers' clock), the
// period (s), the young hash's TTL (s) and the entity's field.
//
// Values pack the counts in declaration order as zigzag varints (7 bits a
// byte, high bit set on all but the last), trailing zeros left out.
const compactPrelude = `
local now, period, ttl, ef = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4]
local born = redis.call('HGET', KEYS[1], '#t')
if born and now - tonumber(born) >= period then
  redis.call('RENAME', KEYS[1], KEYS[2])
  redis.call('HDEL', KEYS[2], '#t')
  born = false
end
local function put(v)
  if not born then
    redis.call('HSET', KEYS[1], '#t', ARGV[1])
    redis.call('EXPIRE', KEYS[1], ttl)
    born = now
  end
  redis.call('HSET', KEYS[1], ef, v)
end
local function find()
  local v = redis.call('HGET', KEYS[1], ef)
  if v then return v end
  v = redis.call('HGET', KEYS[2], ef)
  if v then
    redis.call('HDEL', KEYS[2], ef)
    put(v)
  end
  return v
end
local function unpackc(s)
  local out, n, m = {}, 0, 1
  for i = 1, #s do
    local b = string.byte(s, i)
    if b >= 128 then
      n = n + (b - 128) * m
      m = m * 128
    else
      n = n + b * m
      if n % 2 == 0 then out[#out + 1] = n / 2 else out[#out + 1] = -(n + 1) / 2 end
      n, m = 0, 1
    end
  end
  return out
end
local function packc(vals)
  local last = #vals
  while last > 0 and vals[last] == 0 do last = last - 1 end
  local out = {}
  for j = 1, last do
    local z = vals[j] * 2
    if vals[j] < 0 then z = -vals[j] * 2 - 1 end
    while z >= 128 do
      out[#out + 1] = z % 128 + 128
      z = math.floor(z / 128)
    end
    out[#out + 1] = z
  end
  return string.char(unpack(out))
end
-- bump adds the field number, delta pairs ARGV[first..last] to the
-- entity's value; a cold entity loses its lease instead.
local function bump(first, last)
  local v = find()
  if not v then
    redis.call('DEL', KEYS[3])
    return 0
  end
  local vals = unpackc(v)
  for i = first, last, 2 do
    local j = tonumber(ARGV[i])
    for x = #vals + 1, j do vals[x] = 0 end
    vals[j] = vals[j] + tonumber(ARGV[i + 1])
  end
  put(packc(vals))
  return 1
end
`

// CompactRead reads one entity; the reply is Read's, with the packed value
// in place of the field values.
//
// KEYS: young, old, lease [, epoch, flushing]. ARGV: now, period, ttl,
// field, token, lease ms.
var CompactRead = redisconn.NewScript(compactPrelude + `
local epoch, batch = '', ''
if #KEYS > 3 then
  epoch = redis.call('GET', KEYS[4]) or '0'
  batch = redis.call('HGET', KEYS[5], '#batch') or ''
end
local v = find()
if v then return {2, v, epoch, batch} end
if redis.call('SET', KEYS[3], ARGV[5], 'NX', 'PX', ARGV[6]) then
  return {1, false, epoch, batch}
end
return {0, false, epoch, batch}
`)

// CompactWarm is Warm for the compact and sparse layouts; same reply,
// except that cached is 2 when the young hash has grown past BucketSize
// entities and Redis no longer keeps it as a listpack.
//
// KEYS: young, old, lease, marks [, epoch, pending, flushing]. ARGV: now,
// period, ttl, field, token, epoch, applied (1/0), nf, nf field names,
// pending-field prefix, nf base values (SQL's).
var CompactWarm = redisconn.NewScript(compactPrelude + `
local k, o = 2, 4
local function store(_, vals)
  redis.call('HDEL', KEYS[2], ef)
  put(packc(vals))
  if redis.call('HLEN', KEYS[1]) > ` + crowded + ` and redis.call('OBJECT', 'ENCODING', KEYS[1]) ~= 'listpack' then
    return 2
  end
  return 1
end
` + warmBody)

// crowded is the most entries a young hash is meant to hold: BucketSize
// entities and its birth time, within hash-max-listpack-entries as the
// redis.conf Redis ships sets it (128; built in, it is 512).
var crowded = strconv.Itoa(BucketSize + 1)

// CompactThrough is ThroughIncr for the compact layout: a committed
// write's deltas go into the cached value and its mark is withdrawn; a
// cold entity or an expired mark drops the entry and the lease.
//
// KEYS: young, old, lease, marks. ARGV: now, period, ttl, field, token,
// then field number (1-based), delta pairs.
var CompactThrough = redisconn.NewScript(compactPrelude + `
if redis.call('ZREM', KEYS[4], ARGV[5]) == 0 then
  redis.call('HDEL', KEYS[1], ef)
  redis.call('HDEL', KEYS[2], ef)
  redis.call('DEL', KEYS[3])
  return 0
end
return bump(6, #ARGV)
`)

// CompactBehind is BehindIncr for the compact layout.
//
// KEYS: young, old, lease, pending. ARGV: now, period, ttl, field, field
// number (1-based), delta, pending field.
var CompactBehind = redisconn.NewScript(compactPrelude + `
redis.call('HINCRBY', KEYS[4], ARGV[7], ARGV[6])
return bump(5, 6)
`)

// CompactDrop drops one entity's entry and lease, and withdraws a write
// mark if one is named.
//
// KEYS: young, old, lease [, marks]. ARGV: field [, token].
var CompactDrop = redisconn.NewScript(`
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
if #KEYS > 3 then redis.call('ZREM', KEYS[4], ARGV[2]) end
return 1
`)

// errPacked is a packed value that ends inside a number.
var errPacked = errors.New("redisstore: packed counts cut short")

// Unpack decodes a packed value into out (zeroed first); values past
// len(out) are ignored.
func Unpack(s []byte, out []int64) error {
	clear(out)
	var z uint64
	var shift uint
	j := 0
	for _, b := range s {
		z |= uint64(b&0x7f) << shift
		if b >= 0x80 {
			shift += 7
			if shift > 63 {
				return errPacked
			}
			continue
		}
		if j < len(out) {
			out[j] = int64(z>>1) ^ -int64(z&1)
		}
		j++
		z, shift = 0, 0
	}
	if shift != 0 {
		return errPacked
	}
	return nil
}

// Pack encodes vals as the compact scripts do: zigzag varints, trailing
// zeros left out.
func Pack(vals []int64) []byte {
	last := len(vals)
	for last > 0 && vals[last-1] == 0 {
		last--
	}
	var out []byte
	for _, v := range vals[:last] {
		z := uint64(v<<1) ^ uint64(v>>63)
		for z >= 0x80 {
			out = append(out, byte(z)|0x80)
			z >>= 7
		}
		out = append(out, byte(z))
	}
	return out
}
