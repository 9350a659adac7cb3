package entity

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"
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

// keys of one entity.
func (c *Counters) entityKey(kind string, id int64) string {
	return c.prefix + "pulse:ent:" + kind + ":" + strconv.FormatInt(id, 10)
}

func leaseKey(entityKey string) string { return entityKey + ":lease" }
func marksKey(entityKey string) string { return entityKey + ":writes" }

// pendingField names one counter in the write-behind pending hash.
func pendingField(kind string, id int64, field string) string {
	return kind + ":" + strconv.FormatInt(id, 10) + ":" + field
}

func pendingPrefix(kind string, id int64) string {
	return kind + ":" + strconv.FormatInt(id, 10) + ":"
}

// Lua scripts. Each runs atomically in Redis; together they keep the cache
// equal to SQL plus the write-behind deltas not yet in SQL.

// behindIncrScript is a write-behind increment: the delta goes to the
// pending hash, and to the cached entity if it is warm; a cold entity is
// deleted, with any lease on it, so no warm-up under way can store a value
// that misses this delta.
//
// KEYS: entity, lease, pending. ARGV: field, delta, coldBelow, pending field.
var behindIncrScript = redis.NewScript(3, `
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
var markWriteScript = redis.NewScript(1, `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], 2 * tonumber(ARGV[2]))
return 1
`)

// throughIncrScript applies a write-through write to the cache after SQL
// took it, and withdraws its mark. A cold entity, or a mark that expired
// meanwhile, means the cache cannot be trusted to lack or hold the delta:
// the entry is deleted instead.
//
// KEYS: entity, lease, marks. ARGV: token, field, delta, coldBelow.
var throughIncrScript = redis.NewScript(3, `
if redis.call('ZREM', KEYS[3], ARGV[1]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 0
end
local v = redis.call('HINCRBY', KEYS[1], ARGV[2], ARGV[3])
if v < tonumber(ARGV[4]) then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 0
end
return 1
`)

// readScript reads entities. A warm one answers its fields; for a cold one
// the caller is given a lease (the right to warm it) if nobody holds one.
// The reply starts with the write-behind flush epoch and the id of the
// batch being flushed, which a cold read needs to add the right deltas.
//
// KEYS: epoch, flushing, n entities, n leases. ARGV: token, lease ms,
// coldBelow, fields...
// Reply: epoch, batch id, then per entity the field values, or 1 (lease
// granted) or 0 (cold, no lease).
var readScript = redis.NewScript(-1, `
local n = (#KEYS - 2) / 2
local fields = {}
for i = 4, #ARGV do fields[#fields + 1] = ARGV[i] end
local below = tonumber(ARGV[3])
local out = {redis.call('GET', KEYS[1]) or '0', redis.call('HGET', KEYS[2], '#batch') or ''}
for i = 1, n do
  local vals = redis.call('HMGET', KEYS[2 + i], unpack(fields))
  local warm = true
  for j = 1, #vals do
    if not vals[j] or tonumber(vals[j]) < below then
      warm = false
      break
    end
  end
  if warm then
    out[#out + 1] = vals
  elseif redis.call('SET', KEYS[2 + n + i], ARGV[1], 'NX', 'PX', ARGV[2]) then
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
`)

// warmScript finishes a cold read. It refuses everything if a flush moved
// deltas since the read began (the epoch changed): the caller starts over.
// Otherwise, per entity, it returns the pending and, unless SQL already
// applied the flushing batch, the flushing deltas, so the caller can add
// them to what SQL said; and it caches SQL's values plus those deltas if
// the caller still holds the entity's lease and no write-through write is
// under way on it.
//
// KEYS: epoch, pending, flushing, then entity, lease, marks per entity.
// ARGV: token, ttl s, epoch, applied (1/0), nf, nf fields, then per entity
// its pending-field prefix and nf base values (SQL value + offset).
// Reply: {0} if the epoch moved, else {1, per entity {cached, nf pending,
// nf flushing}}.
var warmScript = redis.NewScript(-1, `
if (redis.call('GET', KEYS[1]) or '0') ~= ARGV[3] then
  return {0}
end
local applied = ARGV[4] == '1'
local nf = tonumber(ARGV[5])
local fields = {}
for j = 1, nf do fields[j] = ARGV[5 + j] end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local m = (#KEYS - 3) / 3
local out = {1}
for i = 1, m do
  local a = 6 + nf + (i - 1) * (nf + 1)
  local pf = {}
  for j = 1, nf do pf[j] = ARGV[a] .. fields[j] end
  local pend = redis.call('HMGET', KEYS[2], unpack(pf))
  local fl = {}
  if not applied then fl = redis.call('HMGET', KEYS[3], unpack(pf)) end
  local ek, lk, mk = KEYS[4 + (i - 1) * 3], KEYS[5 + (i - 1) * 3], KEYS[6 + (i - 1) * 3]
  local cached = 0
  if redis.call('GET', lk) == ARGV[1] then
    redis.call('ZREMRANGEBYSCORE', mk, '-inf', now)
    if redis.call('ZCARD', mk) == 0 then
      redis.call('DEL', ek)
      local hs = {}
      for j = 1, nf do
        hs[#hs + 1] = fields[j]
        hs[#hs + 1] = ARGV[a + j]
      end
      redis.call('HSET', ek, unpack(hs))
      for j = 1, nf do
        if pend[j] then redis.call('HINCRBY', ek, fields[j], pend[j]) end
        if fl[j] then redis.call('HINCRBY', ek, fields[j], fl[j]) end
      end
      redis.call('EXPIRE', ek, ARGV[2])
      cached = 1
    end
    redis.call('DEL', lk)
  end
  local row = {cached}
  for j = 1, nf do
    row[1 + j] = pend[j]
    row[1 + nf + j] = fl[j] or false
  end
  out[#out + 1] = row
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
var moveScript = redis.NewScript(3, `
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
var doneScript = redis.NewScript(2, `
if redis.call('HGET', KEYS[1], '#batch') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('INCR', KEYS[2])
  return 1
end
return 0
`)

// cacheUp reports whether the cache is in use: there is one, and it is not
// known to be down.
func (c *Counters) cacheUp() bool { return c.pool != nil && !c.cacheDown.Load() }

// cacheFailed takes the cache out of use until the background probe finds
// Redis answering again and every entry written around meanwhile has been
// dropped.
func (c *Counters) cacheFailed(op string, err error) {
	c.cacheDown.Store(true)
	c.onError(fmt.Errorf("entity: cache %s: %w", op, err))
}

// conn gets a connection bounded by CacheTimeout. The context must be
// cancelled by the caller.
func (c *Counters) conn(ctx context.Context) (redis.Conn, context.Context, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cacheTimeout)
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return conn, ctx, cancel, nil
}

// runScript runs one script on a fresh connection.
func (c *Counters) runScript(ctx context.Context, s *redis.Script, keysAndArgs ...any) (any, error) {
	conn, ctx, cancel, err := c.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer conn.Close()
	return s.DoContext(ctx, conn, keysAndArgs...)
}

// do runs one command on a fresh connection.
func (c *Counters) do(ctx context.Context, cmd string, args ...any) (any, error) {
	conn, ctx, cancel, err := c.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer conn.Close()
	return redis.DoContext(conn, ctx, cmd, args...)
}

// dropEntries deletes entities' cache entries and leases in one command.
func (c *Counters) dropEntries(ctx context.Context, kinds []string, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, 0, 2*len(ids))
	for i, id := range ids {
		k := c.entityKey(kinds[i], id)
		args = append(args, k, leaseKey(k))
	}
	_, err := c.do(ctx, "DEL", args...)
	return err
}

// invalidate drops entities' cache entries; when Redis cannot be reached
// it records them in SQL, so the entries are dropped once it is back.
func (c *Counters) invalidate(ctx context.Context, kind string, ids []int64) error {
	if c.pool == nil || len(ids) == 0 {
		return nil
	}
	kinds := make([]string, len(ids))
	for i := range kinds {
		kinds[i] = kind
	}
	for attempt := 0; attempt < 3; attempt++ {
		if c.cacheUp() {
			err := c.dropEntries(ctx, kinds, ids)
			if err == nil {
				return nil
			}
			c.cacheFailed("invalidate", err)
		}
		if done, err := c.recordStale(ctx, kind, ids); done {
			return err
		}
	}
	_, err := c.recordStale(ctx, kind, ids)
	return err
}

// recordStale records entities as stale while the cache is out of use
// (see whileDown); done is false if the cache is in use again.
func (c *Counters) recordStale(ctx context.Context, kind string, ids []int64) (done bool, err error) {
	c.outage.RLock()
	defer c.outage.RUnlock()
	if c.cacheUp() {
		return false, nil
	}
	for _, id := range ids {
		if err := c.markStale(ctx, c.db, kind, id); err != nil {
			return true, err
		}
	}
	return true, nil
}

// sqlExecer is a *sql.DB or *sql.Tx.
type sqlExecer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// markStale records in SQL that an entity's cache entry may be wrong.
func (c *Counters) markStale(ctx context.Context, db sqlExecer, kind string, id int64) error {
	err := retry(ctx, func() error {
		_, err := db.ExecContext(ctx, c.q.markStale, kind, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("entity: record stale cache entry: %w", err)
	}
	return nil
}

// sweepBatch is how many stale entries one sweep round handles.
const sweepBatch = 500

// sweep drops the cache entries recorded as stale, then their records. A
// record written again meanwhile (its seq moved) stays for the next sweep.
// It reports whether the table was found empty.
func (c *Counters) sweep(ctx context.Context) (bool, error) {
	for round := 0; round < 100; round++ {
		type stale struct {
			kind string
			id   int64
			seq  int64
		}
		var list []stale
		err := retry(ctx, func() error {
			list = list[:0]
			rows, err := c.db.QueryContext(ctx, c.q.listStale, sweepBatch)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var s stale
				if err := rows.Scan(&s.kind, &s.id, &s.seq); err != nil {
					return err
				}
				list = append(list, s)
			}
			return rows.Err()
		})
		if err != nil {
			return false, fmt.Errorf("entity: sweep: %w", err)
		}
		if len(list) == 0 {
			return true, nil
		}
		kinds := make([]string, len(list))
		ids := make([]int64, len(list))
		for i, s := range list {
			kinds[i], ids[i] = s.kind, s.id
		}
		if err := c.dropEntries(ctx, kinds, ids); err != nil {
			return false, fmt.Errorf("entity: sweep: %w", err)
		}
		err = inTx(ctx, c.db, func(tx *sql.Tx) error {
			for _, s := range list {
				if _, err := tx.ExecContext(ctx, c.q.dropStale, s.kind, s.id, s.seq); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return false, fmt.Errorf("entity: sweep: %w", err)
		}
		if len(list) < sweepBatch {
			return false, nil
		}
	}
	return false, nil
}

// probe checks whether Redis answers again after a failure. When it does,
// the entries recorded as stale are swept, the last sweep under the outage
// lock, and only then is the cache used again.
func (c *Counters) probe(ctx context.Context) {
	if _, err := c.do(ctx, "PING"); err != nil {
		return
	}
	c.discardDeadConns(ctx)
	// The bulk of it while writes still go on.
	if _, err := c.sweep(ctx); err != nil {
		c.onError(err)
		return
	}
	c.outage.Lock()
	defer c.outage.Unlock()
	for {
		empty, err := c.sweep(ctx)
		if err != nil {
			c.onError(err)
			return
		}
		if empty {
			c.cacheDown.Store(false)
			return
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// discardDeadConns pings the idle connections the pool kept from before
// an outage, so that the broken ones are dropped now rather than failing
// the next requests.
func (c *Counters) discardDeadConns(ctx context.Context) {
	n := c.pool.IdleCount()
	conns := make([]redis.Conn, 0, n)
	for i := 0; i < n; i++ {
		conn, err := c.pool.GetContext(ctx)
		if err != nil {
			break
		}
		conns = append(conns, conn)
	}
	for _, conn := range conns {
		cctx, cancel := context.WithTimeout(ctx, c.cacheTimeout)
		_, _ = redis.DoContext(conn, cctx, "PING")
		cancel()
		conn.Close()
	}
}

var errEpochMoved = errors.New("entity: read: a write-behind flush kept moving deltas during the read")
