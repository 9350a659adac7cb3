package timeseries

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
	"github.com/pulse-dev/pulse/timeseries/internal/visitors"
)

// Unique visitors: a request's visitor is hashed under the day's salt at
// once (the raw address and User-Agent are never kept; a stripe's
// visitors.Memo spares a repeat visitor the hash) and its id joins a
// striped set (visitors_stripe.go), one uncontended lock and an insert,
// no Redis. Each
// flush drains the buffers into pending, one set of ids per HyperLogLog
// key, and sends each key one PFADD with all its ids (and its EXPIREAT).
// PFADD is idempotent, so there is no marker: a key's ids leave pending
// only once Redis answered OK, and a resend after a lost reply is
// harmless.
const (
	// maxPendingVisitors bounds the ids waiting for Redis, summed over
	// keys (a visitor of one series is one id per precision): about
	// 16 MiB of sets at most.
	maxPendingVisitors = 1 << 20
	// saltRecheck is how often the held salts are offered to Redis again,
	// so a salt Redis lost comes back and all instances keep one.
	saltRecheck = 60
)

// visitorState is a Recorder's unique visitors: their stripes, what waits
// for Redis, and its own flush (visitors_flush.go) and spill
// (visitors_spill.go); nil when Config.DisableVisitors.
type visitorState struct {
	env     visitorEnv
	book    visitors.Book
	precs   []int // the schema's precisions visitors are kept at
	step    int64 // their gcd: seconds with the same step share every bucket
	stripes [numStripes]visitorStripe
	noSalt  atomic.Int64 // visitors not counted: no salt known yet

	mu        sync.Mutex    // guards the fields below; taken under flushMu
	drained   []visitorSlot // reused by each drain
	pending   map[string]*visitorKey
	npending  int64 // ids summed over pending keys
	dropped   int64
	lastCheck int64    // unix second of the last salt recheck
	files     []string // loaded visitor spill files not yet sent
}

// visitorKey is what waits for one HyperLogLog key.
type visitorKey struct {
	expire int64 // EXPIREAT, unix seconds
	newest int64 // newest second of its ids, for MaxPendingAge
	ids    map[uint64]struct{}
}

// visitorEnv is what the visitors take from their Recorder: where and how
// they write, and the Recorder's stripe locks, counters and reports.
type visitorEnv struct {
	router        *redisconn.Router
	schema        series.Keys
	clock         Clock
	timeout       time.Duration
	waitReplicas  int
	maxPendingAge int64
	spillDir, id  string
	onError       func(error)
	// flushMu is the Recorder's: one flush at a time, visitors included.
	flushMu *sync.Mutex
	locks   *[numStripes]stripeLock
	// counters copies the Recorder's Counters (a Counter's id is its
	// index there); closed reports whether Close began; refused reports
	// a key Redis refused for good; removeSpill removes a sent file.
	counters    func() []*Counter
	closed      func() bool
	refused     func(key string)
	removeSpill func(name string)
}

// visitorEnv is the visitors' view of r.
func (r *Recorder) visitorEnv() visitorEnv {
	return visitorEnv{
		router: r.sender.router, schema: r.schema, clock: r.clock, timeout: r.sender.timeout,
		waitReplicas: r.sender.waitReplicas, maxPendingAge: r.maxPendingAge,
		spillDir: r.spillDir, id: r.id, onError: r.onError,
		flushMu: &r.flushMu, locks: &r.counts.locks,
		counters: func() []*Counter {
			r.mu.Lock()
			defer r.mu.Unlock()
			return slices.Clone(r.counts.all)
		},
		closed: func() bool {
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.closed
		},
		refused: func(key string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.status.refused(key)
		},
		removeSpill: r.removeSpill,
	}
}

// newVisitorState keeps visitors at the schema's precisions that are in
// series.DefaultVisitorPrecisions, so readers know which keys exist; nil
// when there are none.
func newVisitorState(env visitorEnv) *visitorState {
	var precs []int
	for _, p := range env.schema.Precisions {
		if slices.Contains(series.DefaultVisitorPrecisions, p) {
			precs = append(precs, p)
		}
	}
	if len(precs) == 0 {
		return nil
	}
	return &visitorState{env: env, precs: precs, step: gcdOf(precs), pending: map[string]*visitorKey{}}
}

// salt is the salt of sec's day, or nil, counted as a visitor not
// counted, while none is known yet.
func (u *visitorState) salt(sec int64) *visitors.Salt {
	salt := u.book.For(sec)
	if salt == nil {
		u.noSalt.Add(1)
	}
	return salt
}

// recordLocked counts visitor v, hashed under salt, at second sec in the
// series cs[i] whose bit i is set in which, in stripe si, whose lock
// the caller holds.
func (u *visitorState) recordLocked(si uint32, sec int64, salt *visitors.Salt, v Visitor, cs *[MaxTimed]*Counter, which uint8) {
	s := &u.stripes[si]
	step := series.BucketStart(sec, int(u.step))
	var id uint64
	if v.ID != "" {
		id = s.memo.AppID(salt, v.ID)
	} else {
		id = s.memo.ClientID(salt, v.Addr, v.UserAgent)
	}
	for i, c := range cs {
		if c != nil && which&(1<<i) != 0 {
			s.add(c.id, step, sec, id)
		}
	}
}

// visitorSrc is the ids of one series in one step.
type visitorSrc struct {
	c    *Counter
	step int64
}

// drainAged drains the stripes and drops what is older than
// MaxPendingAge. The caller holds flushMu, not the Recorder's mu.
func (u *visitorState) drainAged() {
	cutoff := u.env.clock.Now().Unix() - u.env.maxPendingAge
	u.drain(u.env.locks, u.env.schema, cutoff, u.env.counters())
}

// drain moves the stripes' ids into pending and drops pending keys older
// than cutoff (unix seconds); locks are the Recorder's stripe locks and
// counters its Counters, by id. The caller holds flushMu.
func (u *visitorState) drain(locks *[numStripes]stripeLock, schema series.Keys, cutoff int64, counters []*Counter) {
	u.mu.Lock()
	defer u.mu.Unlock()
	keys := map[visitorSrc][]*visitorKey{}
	for i := range u.stripes {
		s, mu := &u.stripes[i], &locks[i]
		mu.Lock()
		u.drained = s.take(u.drained[:0])
		u.dropped += s.full
		s.full = 0
		mu.Unlock()
		for _, e := range u.drained {
			u.add(schema, keys, counters[e.counter], e, cutoff)
		}
	}
	clear(u.drained)
	u.age(cutoff)
}

// add puts one id in the pending key of each precision.
func (u *visitorState) add(schema series.Keys, keys map[visitorSrc][]*visitorKey, c *Counter, e visitorSlot, cutoff int64) {
	if e.sec < cutoff {
		u.dropped++
		return
	}
	src := visitorSrc{c, e.step}
	ks, ok := keys[src]
	if !ok {
		ks = u.keysOf(schema, src)
		keys[src] = ks
	}
	if ks == nil {
		return // a name no key can hold; its hits have no durations either
	}
	if u.npending+int64(len(ks)) > maxPendingVisitors {
		u.dropped++
		return
	}
	for _, k := range ks {
		if _, dup := k.ids[e.id]; !dup {
			k.ids[e.id] = struct{}{}
			u.npending++
		}
		k.newest = max(k.newest, e.sec)
	}
}

// keysOf returns the pending keys of src's buckets, made when missing.
func (u *visitorState) keysOf(schema series.Keys, src visitorSrc) []*visitorKey {
	ks := make([]*visitorKey, 0, len(u.precs))
	for _, p := range u.precs {
		bucket := series.BucketStart(src.step, p)
		name, ok := schema.VisitorKey(p, src.c.name, bucket)
		if !ok {
			return nil
		}
		k := u.pending[name]
		if k == nil {
			k = &visitorKey{expire: series.LatExpireAt(bucket, p), ids: map[uint64]struct{}{}}
			u.pending[name] = k
		}
		ks = append(ks, k)
	}
	return ks
}

// age drops pending keys with no id at or after cutoff: Redis was
// unreachable longer than MaxPendingAge.
func (u *visitorState) age(cutoff int64) {
	for name, k := range u.pending {
		if k.newest < cutoff {
			u.dropped += int64(len(k.ids))
			u.npending -= int64(len(k.ids))
			delete(u.pending, name)
		}
	}
}
