package entity

import (
	"strconv"
	"time"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

const (
	// countOffset is added to every cached value, so that a HINCRBY on a key
	// that is not cached (which starts from 0) gives a result far below any
	// cached value and shows the cache was cold.
	countOffset = 1 << 40
	// coldBelow is the line between the two: a cached field below it is
	// cold. Half the offset, so counts that drifted negative still cache.
	coldBelow = countOffset / 2
	// leaseTTL bounds how long a reader may take between claiming the
	// right to warm an entity and warming it.
	leaseTTL = 5 * time.Second
	// writeMarkTTL bounds how long a write-through writer may take between
	// announcing its write and applying it to the cache; a writer slower
	// than that deletes the entry instead of incrementing it.
	writeMarkTTL = 10 * time.Second
	// batchField holds a flushing batch's id inside the flushing hash.
	batchField = "#batch"
)

// Keys. An entity's own keys share the hash tag {kind:id}, so its hash,
// lease and write marks live in one Redis Cluster slot and every script on
// one entity touches one slot. No script or transaction spans entities.

func (c *Counters) entityKey(kind string, id int64) string {
	return c.prefix + "pulse:ent:{" + kind + ":" + strconv.FormatInt(id, 10) + "}"
}

func leaseKey(entityKey string) string { return entityKey + ":lease" }
func marksKey(entityKey string) string { return entityKey + ":writes" }

// pendingField names one counter in the write-behind pending hash.
func pendingField(kind string, id int64, field string) string {
	return pendingPrefix(kind, id) + field
}

func pendingPrefix(kind string, id int64) string {
	return kind + ":" + strconv.FormatInt(id, 10) + ":"
}

// newScript is a script sent by its SHA1 (EVALSHA), with its source as
// the fallback when the server does not know it yet (NOSCRIPT).
func newScript(src string) *redisconn.Script { return redisconn.NewScript(src) }

// Lua scripts. Each runs atomically in Redis on the keys of one entity
// (write-behind's also on its shared pending hash, which is why that mode
// is refused on a cluster); together they keep the cache equal to SQL plus
// the write-behind deltas not yet in SQL.

// behindIncrScript is a write-behind increment: the delta goes to the
// pending hash, and to the cached entity if it is warm; a cold entity is
// deleted, with any lease on it, so no warm-up under way can store a value
// that misses this delta.
//
// KEYS: entity, lease, pending. ARGV: field, delta, coldBelow, pending field.
var behindIncrScript = newScript(`
redis.call('HINCRBY', KEYS[3], ARGV[4], ARGV[2])
local v = redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
if v < tonumber(ARGV[3]) then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 0
end
return 1
`)

// markWriteScript announces a write-through write before it goes to SQL:
// while the mark stands, no reader may warm the entity, since what it read
// from SQL may already hold the delta the writer is about to add to the
// cache. The mark expires on its own if the writer dies.
//
// KEYS: marks. ARGV: token, ttl ms.
var markWriteScript = newScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], 2 * tonumber(ARGV[2]))
return 1
`)

// throughIncrScript applies a write-through write's deltas to the cache
// after SQL took them, and withdraws its mark. A cold entity, or a mark
// that expired meanwhile, means the cache cannot be trusted to lack or
// hold the deltas: the entry is deleted instead.
//
// KEYS: entity, lease, marks. ARGV: token, coldBelow, then field, delta
// pairs.
var throughIncrScript = newScript(`
if redis.call('ZREM', KEYS[3], ARGV[1]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 0
end
for i = 3, #ARGV, 2 do
  local v = redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
  if v < tonumber(ARGV[2]) then
    redis.call('DEL', KEYS[1], KEYS[2])
    return 0
  end
end
return 1
`)

// readScript reads one entity. A warm one answers its fields; for a cold
// one the caller is given a lease (the right to warm it) if nobody holds
// one. In write-behind mode it also answers the flush epoch and the id of
// the batch being flushed, which a cold read needs to add the right
// deltas.
//
// KEYS: entity, lease [, epoch, flushing]. ARGV: token, lease ms,
// coldBelow, fields...
// Reply: {state, values, epoch, batch}: state 2 warm (values set), 1 cold
// with the lease granted, 0 cold without.
var readScript = newScript(`
local fields = {}
for i = 4, #ARGV do fields[#fields + 1] = ARGV[i] end
local epoch, batch = '', ''
if #KEYS > 2 then
  epoch = redis.call('GET', KEYS[3]) or '0'
  batch = redis.call('HGET', KEYS[4], '#batch') or ''
end
local vals = redis.call('HMGET', KEYS[1], unpack(fields))
local below = tonumber(ARGV[3])
for j = 1, #vals do
  if not vals[j] or tonumber(vals[j]) < below then
    if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
      return {1, false, epoch, batch}
    end
    return {0, false, epoch, batch}
  end
end
return {2, vals, epoch, batch}
`)

// warmScript finishes a cold read of one entity. In write-behind mode it
// refuses if a flush moved deltas since the read began (the epoch
// changed): the caller starts over; otherwise it returns the entity's
// pending and, unless SQL already applied the flushing batch, flushing
// deltas, so the caller can add them to what SQL said. It caches SQL's
// values plus those deltas if the caller still holds the lease and no
// write-through write is under way on the entity.
//
// KEYS: entity, lease, marks [, epoch, pending, flushing].
// ARGV: token, ttl s, epoch, applied (1/0), nf, nf fields, pending-field
// prefix, nf base values (SQL value + offset).
// Reply: {0} if the epoch moved, else {1, cached, nf pending, nf flushing}.
var warmScript = newScript(`
local behind = #KEYS > 3
if behind and (redis.call('GET', KEYS[4]) or '0') ~= ARGV[3] then
  return {0}
end
local applied = ARGV[4] == '1'
local nf = tonumber(ARGV[5])
local fields = {}
for j = 1, nf do fields[j] = ARGV[5 + j] end
local a = 6 + nf
local pend, fl = {}, {}
if behind then
  local pf = {}
  for j = 1, nf do pf[j] = ARGV[a] .. fields[j] end
  pend = redis.call('HMGET', KEYS[5], unpack(pf))
  if not applied then fl = redis.call('HMGET', KEYS[6], unpack(pf)) end
end
local cached = 0
if redis.call('GET', KEYS[2]) == ARGV[1] then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZCARD', KEYS[3]) == 0 then
    local hs = {}
    for j = 1, nf do
      local v = tonumber(ARGV[a + j])
      if pend[j] then v = v + tonumber(pend[j]) end
      if fl[j] then v = v + tonumber(fl[j]) end
      hs[#hs + 1] = fields[j]
      hs[#hs + 1] = string.format('%d', v)
    end
    redis.call('DEL', KEYS[1])
    redis.call('HSET', KEYS[1], unpack(hs))
    redis.call('EXPIRE', KEYS[1], ARGV[2])
    cached = 1
  end
  redis.call('DEL', KEYS[2])
end
local out = {1, cached}
for j = 1, nf do
  out[2 + j] = pend[j] or false
  out[2 + nf + j] = fl[j] or false
end
return out
`)

// moveScript is flush step 1: unless a batch is being flushed already
// (then it names that one, to be finished first), it renames the pending
// hash to the flushing hash, tags it with a new batch id and moves the
// epoch on.
//
// KEYS: pending, flushing, epoch. ARGV: new batch id.
// Reply: {batch id or ”, 1 if new}.
var moveScript = newScript(`
local cur = redis.call('HGET', KEYS[2], '#batch')
if cur then return {cur, 0} end
if redis.call('EXISTS', KEYS[1]) == 0 then return {'', 0} end
redis.call('DEL', KEYS[2])
redis.call('RENAME', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[2], '#batch', ARGV[1])
redis.call('INCR', KEYS[3])
return {ARGV[1], 1}
`)

// doneScript is the last flush step: the flushing hash goes, if it still
// holds the batch just applied, and the epoch moves on.
//
// KEYS: flushing, epoch. ARGV: batch id.
var doneScript = newScript(`
if redis.call('HGET', KEYS[1], '#batch') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('INCR', KEYS[2])
  return 1
end
return 0
`)
