package redisstore

import "github.com/pulse-dev/pulse/internal/redisconn"

// Lua scripts. Each runs atomically in Redis on the keys of one entity
// (write-behind's also on its shared pending hash, which is why that mode
// is refused on a cluster); together they keep the cache equal to SQL plus
// the write-behind deltas not yet in SQL.

// BehindIncr is a write-behind increment: the delta goes to the
// pending hash, and to the cached entity if it is warm; a cold entity is
// deleted, with any lease on it, so no warm-up under way can store a value
// that misses this delta.
//
// KEYS: entity, lease, pending. ARGV: field, delta, coldBelow, pending field.
var BehindIncr = redisconn.NewScript(`
redis.call('HINCRBY', KEYS[3], ARGV[4], ARGV[2])
local v = redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
if v < tonumber(ARGV[3]) then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 0
end
return 1
`)

// MarkWrite announces a write-through write before it goes to SQL:
// while the mark stands, no reader may warm the entity, since what it read
// from SQL may already hold the delta the writer is about to add to the
// cache. The mark expires on its own if the writer dies.
//
// KEYS: marks. ARGV: token, ttl ms.
var MarkWrite = redisconn.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], 2 * tonumber(ARGV[2]))
return 1
`)

// ThroughIncr applies a write-through write's deltas to the cache
// after SQL took them, and withdraws its mark. A cold entity, or a mark
// that expired meanwhile, means the cache cannot be trusted to lack or
// hold the deltas: the entry is deleted instead.
//
// KEYS: entity, lease, marks. ARGV: token, coldBelow, then field, delta
// pairs.
var ThroughIncr = redisconn.NewScript(`
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

// Read reads one entity. A warm one answers its fields; for a cold
// one the caller is given a lease (the right to warm it) if nobody holds
// one. In write-behind mode it also answers the flush epoch and the id of
// the batch being flushed, which a cold read needs to add the right
// deltas.
//
// KEYS: entity, lease [, epoch, flushing]. ARGV: token, lease ms,
// coldBelow, fields...
// Reply: {state, values, epoch, batch}: state 2 warm (values set), 1 cold
// with the lease granted, 0 cold without.
var Read = redisconn.NewScript(`
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

// Warm finishes a cold read of one entity. In write-behind mode it
// refuses if a flush moved deltas since the read began (the epoch
// changed): the caller starts over; otherwise it returns the entity's
// pending and, unless SQL already applied the flushing batch, flushing
// deltas, so the caller can add them to what SQL said. It caches SQL's
// values plus those deltas if the caller still holds the lease and no
// write-through write is under way on the entity.
//
// KEYS: entity, lease, marks [, epoch, pending, flushing].
// ARGV: ttl s, token, epoch, applied (1/0), nf, nf fields, pending-field
// prefix, nf base values (SQL value + offset).
// Reply: {0} if the epoch moved, else {1, cached, nf pending, nf flushing}.
var Warm = redisconn.NewScript(`
local k, o = 1, 1
local function store(fields, vals)
  local hs = {}
  for j = 1, #fields do
    hs[#hs + 1] = fields[j]
    hs[#hs + 1] = string.format('%d', vals[j])
  end
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], unpack(hs))
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  return 1
end
` + warmBody)

// warmBody is the warm-up both layouts share. Before it a script sets k
// (KEYS[k+1..k+5] are lease, marks, epoch, pending, flushing), o
// (ARGV[o+1..] are token, epoch, applied, nf, fields, pending-field
// prefix, base values) and store(fields, vals), which caches the values
// and returns what the reply's cached says.
const warmBody = `
local behind = #KEYS > k + 2
if behind and (redis.call('GET', KEYS[k + 3]) or '0') ~= ARGV[o + 2] then
  return {0}
end
local applied = ARGV[o + 3] == '1'
local nf = tonumber(ARGV[o + 4])
local fields = {}
for j = 1, nf do fields[j] = ARGV[o + 4 + j] end
local a = o + 5 + nf
local pend, fl = {}, {}
if behind then
  local pf = {}
  for j = 1, nf do pf[j] = ARGV[a] .. fields[j] end
  pend = redis.call('HMGET', KEYS[k + 4], unpack(pf))
  if not applied then fl = redis.call('HMGET', KEYS[k + 5], unpack(pf)) end
end
local cached = 0
if redis.call('GET', KEYS[k + 1]) == ARGV[o + 1] then
  local t = redis.call('TIME')
  local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZREMRANGEBYSCORE', KEYS[k + 2], '-inf', ms)
  if redis.call('ZCARD', KEYS[k + 2]) == 0 then
    local vals = {}
    for j = 1, nf do
      local v = tonumber(ARGV[a + j])
      if pend[j] then v = v + tonumber(pend[j]) end
      if fl[j] then v = v + tonumber(fl[j]) end
      vals[j] = v
    end
    cached = store(fields, vals)
  end
  redis.call('DEL', KEYS[k + 1])
end
local out = {1, cached}
for j = 1, nf do
  out[2 + j] = pend[j] or false
  out[2 + nf + j] = fl[j] or false
end
return out
`

// Move is flush step 1: unless a batch is being flushed already
// (then it names that one, to be finished first), it renames the pending
// hash to the flushing hash, tags it with a new batch id and moves the
// epoch on.
//
// KEYS: pending, flushing, epoch. ARGV: new batch id.
// Reply: {batch id or ”, 1 if new}.
var Move = redisconn.NewScript(`
local cur = redis.call('HGET', KEYS[2], '#batch')
if cur then return {cur, 0} end
if redis.call('EXISTS', KEYS[1]) == 0 then return {'', 0} end
redis.call('DEL', KEYS[2])
redis.call('RENAME', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[2], '#batch', ARGV[1])
redis.call('INCR', KEYS[3])
return {ARGV[1], 1}
`)

// Done is the last flush step: the flushing hash goes, if it still
// holds the batch just applied, and the epoch moves on.
//
// KEYS: flushing, epoch. ARGV: batch id.
var Done = redisconn.NewScript(`
if redis.call('HGET', KEYS[1], '#batch') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('INCR', KEYS[2])
  return 1
end
return 0
`)

// SetIfGreater raises a cached global value, never lowers it: the
// values only grow, so writers racing each other end on the largest.
//
// KEYS: globals. ARGV: ttl ms, then field, value pairs.
var SetIfGreater = redisconn.NewScript(`
for i = 2, #ARGV, 2 do
  local cur = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '-1')
  if cur < tonumber(ARGV[i + 1]) then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`)
