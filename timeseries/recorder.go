package timeseries

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/ratelog"
)

// Defaults for Config's zero fields.
const (
	DefaultFlushInterval = time.Second
	DefaultFlushTimeout  = 2 * time.Second
	DefaultMaxNames      = 1000
	DefaultOverflowName  = "overflow"
	DefaultMaxPendingAge = 15 * time.Minute
	maxBackoff           = 30 * time.Second
	// maxBatchDeltas bounds one flush script, so that catching up after a
	// long outage does not stall Redis with one huge call.
	maxBatchDeltas = 8192
)

// Config configures a Recorder. Nil and zero fields take the defaults.
type Config struct {
	// Pool is the caller's connection pool; required. Give it short dial,
	// read and write timeouts: a Redis outage then costs a flush a bounded
	// wait instead of piling up goroutines.
	Pool *redis.Pool
	// Schema sets the key prefix and precisions.
	Schema Schema
	// FlushInterval is how often aggregated hits are written (default 1 s).
	FlushInterval time.Duration
	// FlushTimeout bounds one write to Redis (default 2 s).
	FlushTimeout time.Duration
	// WriteThrough writes every Record at once, in one pipeline of HINCRBY
	// and ZADD per series and precision, on the caller's goroutine: no
	// loss window, one Redis round trip per request. FlushInterval then
	// only paces retries after a failure.
	WriteThrough bool
	// MaxNames caps the distinct series names (default 1000). Past it, new
	// names fold into the series OverflowName, so the key count stays
	// bounded whatever clients send.
	MaxNames int
	// OverflowName is the series that takes hits of names over the cap.
	OverflowName string
	// MaxPendingAge bounds how long hits are kept in memory while Redis is
	// unreachable (default 15 min). Older hits are dropped and counted in
	// Health.DroppedHits.
	MaxPendingAge time.Duration
	// Clock stamps hits; nil means the system clock.
	Clock Clock
	// OnError receives flush errors; nil logs them with log/slog, at most
	// one line every 10 s.
	OnError func(error)
}

// Recorder counts hits in process and writes them to Redis in the
// background. All methods are safe for concurrent use.
type Recorder struct {
	pool          *redis.Pool
	schema        Schema
	clock         Clock
	interval      time.Duration
	timeout       time.Duration
	writeThrough  bool
	maxNames      int
	maxPendingAge int64
	onError       func(error)
	markerKey     string

	mu        sync.Mutex // guards the fields below
	names     map[string]*Counter
	counters  []*Counter
	overflow  *Counter
	pending   map[pendingKey]int64 // hits never sent, by counter and second
	uncertain []*batch             // sent, outcome unknown: resent as they are
	inflight  int64                // hits of the flush under way, out of pending meanwhile
	seq       int64
	retryAt   time.Time // no flush attempt before it, after a failure
	backoff   time.Duration
	health    Health

	// nowSec is the current unix second when the clock is the system
	// clock: a timer advances it at each second boundary, because reading
	// the time costs more than the rest of Record together.
	nowSec      atomic.Int64
	coarseClock bool

	flushMu sync.Mutex // one flush at a time
	dropped atomic.Int64
	refused atomic.Int64

	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

type pendingKey struct {
	counter int32
	sec     int64
}

// A Counter keeps the hits of the last ringSize seconds in memory, in
// each of numShards stripes. A slot reused for a newer second hands its
// count to pending first, so a late flusher loses nothing; the ring only
// needs to be long enough that this is rare.
const (
	ringSize  = 8
	numShards = 8
)

// Counter is one series. Its Inc is an atomic add on the slot of the
// current second in one of several stripes, so that cores recording at
// once rarely write the same cache line: no lock, no allocation, no Redis.
type Counter struct {
	rec     *Recorder
	id      int32
	name    string
	keys    []string // count key per precision
	members []string // known-set member per precision
	shards  [numShards]ring
	// moved counts the hits that left the ring (to pending, or written at
	// once in write-through mode): with the ring's contents, the total.
	moved atomic.Int64
}

type ring struct {
	slots [ringSize]slot // 128 bytes: two cache lines
}

type slot struct {
	sec atomic.Int64
	n   atomic.Int64
}

const emptySlot = math.MinInt64

// NewRecorder validates cfg and starts the background flusher. Call Close
// to stop it and write what is pending.
func NewRecorder(cfg Config) (*Recorder, error) {
	if cfg.Pool == nil {
		return nil, errors.New("timeseries: Config.Pool is nil")
	}
	schema, err := cfg.Schema.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.FlushInterval < 0 || cfg.FlushTimeout < 0 || cfg.MaxNames < 0 || cfg.MaxPendingAge < 0 {
		return nil, errors.New("timeseries: negative FlushInterval, FlushTimeout, MaxNames or MaxPendingAge")
	}
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	if cfg.FlushTimeout == 0 {
		cfg.FlushTimeout = DefaultFlushTimeout
	}
	if cfg.MaxNames == 0 {
		cfg.MaxNames = DefaultMaxNames
	}
	if cfg.OverflowName == "" {
		cfg.OverflowName = DefaultOverflowName
	}
	if err := ValidateName(cfg.OverflowName); err != nil {
		return nil, fmt.Errorf("timeseries: OverflowName: %w", err)
	}
	if cfg.MaxPendingAge == 0 {
		cfg.MaxPendingAge = DefaultMaxPendingAge
	}
	coarse := cfg.Clock == nil || cfg.Clock == SystemClock
	if cfg.Clock == nil {
		cfg.Clock = SystemClock
	}
	if cfg.OnError == nil {
		cfg.OnError = ratelog.New("pulse: recorder", 10*time.Second)
	}
	id := make([]byte, 8)
	if _, err := crand.Read(id); err != nil {
		return nil, fmt.Errorf("timeseries: instance id: %w", err)
	}
	r := &Recorder{
		pool:          cfg.Pool,
		schema:        schema,
		clock:         cfg.Clock,
		interval:      cfg.FlushInterval,
		timeout:       cfg.FlushTimeout,
		writeThrough:  cfg.WriteThrough,
		maxNames:      cfg.MaxNames,
		maxPendingAge: int64(cfg.MaxPendingAge / time.Second),
		onError:       cfg.OnError,
		markerKey:     schema.Prefix + "pulse:flushed:" + hex.EncodeToString(id),
		names:         map[string]*Counter{},
		pending:       map[pendingKey]int64{},
		done:          make(chan struct{}),
		coarseClock:   coarse,
	}
	r.health.RedisUp = true
	r.overflow = r.newCounterLocked(cfg.OverflowName)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.nowSec.Store(time.Now().Unix())
	go r.loop(ctx)
	return r, nil
}

// Schema returns the recorder's schema with defaults filled in.
func (r *Recorder) Schema() Schema { return r.schema }

// Counter returns the series called name, creating it on first use. Names
// are checked here, once, not per hit. Past Config.MaxNames distinct names
// it returns the overflow series and counts the refusal.
func (r *Recorder) Counter(name string) (*Counter, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.names[name]; ok {
		return c, nil
	}
	if name == r.overflow.name {
		return r.overflow, nil
	}
	if len(r.names) >= r.maxNames {
		r.refused.Add(1)
		return r.overflow, nil
	}
	c := r.newCounterLocked(name)
	r.names[name] = c
	return c, nil
}

func (r *Recorder) newCounterLocked(name string) *Counter {
	c := &Counter{rec: r, id: int32(len(r.counters)), name: name}
	for _, p := range r.schema.Precisions {
		c.keys = append(c.keys, r.schema.CountKey(p, name))
		c.members = append(c.members, Member(p, name))
	}
	for i := range c.shards {
		for j := range c.shards[i].slots {
			c.shards[i].slots[j].sec.Store(emptySlot)
		}
	}
	r.counters = append(r.counters, c)
	return c
}

// Name is the series name.
func (c *Counter) Name() string { return c.name }

// Inc records one hit now.
func (c *Counter) Inc() { c.rec.Record(c) }

// Record records one hit in each counter, stamped with the clock once.
// In the default mode it only adds to memory; in write-through mode it
// writes one pipeline to Redis before returning, unless Redis is known to
// be down, in which case the hits wait in memory for the flusher.
func (r *Recorder) Record(counters ...*Counter) {
	sec := r.now()
	if r.writeThrough {
		r.writeNow(sec, counters)
		return
	}
	st := stripes.Get().(*stripe)
	for _, c := range counters {
		c.add(st.index, sec, 1)
	}
	stripes.Put(st)
}

// stripe names one of the numShards stripes of every Counter.
type stripe struct{ index uint32 }

// stripes hands out stripes so that each P mostly keeps one of its own:
// sync.Pool caches per P, so a goroutine usually gets back the stripe its
// P used last, and two cores rarely add to the same cache line. A random
// stripe per call would make them collide and bounce lines between
// cores. New hands out pointers into a fixed array: it never allocates.
var (
	stripeSet  [numShards]stripe
	nextStripe atomic.Uint32
	stripes    = sync.Pool{New: func() any { return &stripeSet[nextStripe.Add(1)%numShards] }}
)

func init() {
	for i := range stripeSet {
		stripeSet[i].index = uint32(i)
	}
}

func (c *Counter) add(shard uint32, sec, n int64) {
	s := &c.shards[shard].slots[uint64(sec)%ringSize]
	if s.sec.Load() == sec {
		s.n.Add(n)
		return
	}
	// A new second for this slot: move what the slot holds to pending
	// under the lock so the flusher sees every hit with its own second.
	r := c.rec
	r.mu.Lock()
	if s.sec.Load() != sec {
		if old := s.n.Swap(0); old != 0 {
			r.pending[pendingKey{c.id, s.sec.Load()}] += old
			c.moved.Add(old)
		}
		s.sec.Store(sec)
	}
	s.n.Add(n)
	r.mu.Unlock()
}

// drainLocked moves every counter's ring into pending.
func (r *Recorder) drainLocked() {
	for _, c := range r.counters {
		for i := range c.shards {
			for j := range c.shards[i].slots {
				s := &c.shards[i].slots[j]
				if s.n.Load() == 0 {
					continue
				}
				if n := s.n.Swap(0); n != 0 {
					r.pending[pendingKey{c.id, s.sec.Load()}] += n
					c.moved.Add(n)
				}
			}
		}
	}
}

// writeNow is the write-through path: the original design's pipeline of
// HINCRBY then ZADD for every series and precision.
func (r *Recorder) writeNow(sec int64, counters []*Counter) {
	for _, c := range counters {
		c.moved.Add(1)
	}
	r.mu.Lock()
	down := !r.retryAt.IsZero() && time.Now().Before(r.retryAt)
	r.mu.Unlock()
	if !down {
		err := r.pipelineHits(sec, counters)
		if err == nil {
			return
		}
		r.failed(err)
	}
	r.mu.Lock()
	for _, c := range counters {
		r.pending[pendingKey{c.id, sec}]++
	}
	r.mu.Unlock()
}

func (r *Recorder) pipelineHits(sec int64, counters []*Counter) error {
	conn := r.pool.Get()
	defer conn.Close()
	known := r.schema.KnownKey()
	for _, c := range counters {
		for i, p := range r.schema.Precisions {
			_ = conn.Send("HINCRBY", c.keys[i], BucketStart(sec, p), 1)
			_ = conn.Send("ZADD", known, 0, c.members[i])
		}
	}
	if _, err := redis.DoWithTimeout(conn, r.timeout, ""); err != nil {
		return fmt.Errorf("timeseries: write-through: %w", err)
	}
	return nil
}

// now is the unix second to stamp a hit with.
func (r *Recorder) now() int64 {
	if r.coarseClock {
		return r.nowSec.Load()
	}
	return r.clock.Now().Unix()
}

// untilNextSecond is how long from t to the next whole second.
func untilNextSecond(t time.Time) time.Duration {
	return t.Truncate(time.Second).Add(time.Second).Sub(t)
}

func (r *Recorder) loop(ctx context.Context) {
	defer close(r.done)
	flushes := time.NewTicker(r.interval)
	defer flushes.Stop()
	// The second timer runs even with an injected clock; it is cheap.
	second := time.NewTimer(untilNextSecond(time.Now()))
	defer second.Stop()
	flushDone := make(chan struct{}, 1)
	flushing := false
	for {
		select {
		case <-ctx.Done():
			if flushing {
				<-flushDone
			}
			return
		case now := <-second.C:
			r.nowSec.Store(time.Now().Unix())
			second.Reset(untilNextSecond(now))
		case <-flushes.C:
			// Flush on its own goroutine so a slow Redis cannot stop the
			// clock; at most one runs at a time.
			if !flushing {
				flushing = true
				go func() {
					// Not cancelled by Close: a flush under way finishes
					// (within FlushTimeout) rather than leave a batch whose
					// fate Redis alone knows.
					_ = r.flush(context.WithoutCancel(ctx), false)
					flushDone <- struct{}{}
				}()
			}
		case <-flushDone:
			flushing = false
		}
	}
}

// Flush writes everything recorded so far now, ignoring any retry
// backoff, and returns the error of the attempt.
func (r *Recorder) Flush(ctx context.Context) error { return r.flush(ctx, true) }

// batch is one flush script call. Its seq lets Redis refuse a second
// application: a batch whose reply was lost is resent with the same seq.
type batch struct {
	seq    int64
	keys   []any // marker, known, then one count key per delta
	args   []any // seq, ttl, n, then field/delta pairs, then members
	hits   int64
	newest int64 // newest second of any hit in it
}

func (r *Recorder) flush(ctx context.Context, force bool) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()

	r.mu.Lock()
	r.drainLocked()
	if !force && time.Now().Before(r.retryAt) {
		r.dropOldLocked()
		r.mu.Unlock()
		return nil
	}
	pending, uncertain := r.pending, r.uncertain
	r.pending, r.uncertain = map[pendingKey]int64{}, nil
	fresh := r.batchesLocked(pending)
	all := append(uncertain, fresh...)
	for _, b := range all {
		r.inflight += b.hits
	}
	r.mu.Unlock()

	if len(all) == 0 {
		r.succeeded(false)
		return nil
	}
	applied, wrote, err := r.send(ctx, all)
	if err == nil {
		r.succeeded(true)
		return nil
	}
	r.mu.Lock()
	r.inflight = 0
	if wrote {
		// Whatever was written may have been applied: resend those batches
		// as they are, so Redis can refuse a second application.
		r.uncertain = append(all[applied:], r.uncertain...)
	} else {
		// Nothing reached Redis: the fresh hits go back to pending, to be
		// merged with newer ones.
		r.uncertain = append(uncertain, r.uncertain...)
		for k, n := range pending {
			r.pending[k] += n
		}
	}
	r.dropOldLocked()
	r.mu.Unlock()
	r.failed(err)
	return err
}

// send writes batches in one pipeline. It reports how many were applied
// for sure, whether anything was written to the connection at all, and
// the first error.
func (r *Recorder) send(ctx context.Context, batches []*batch) (applied int, wrote bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	conn, err := r.pool.GetContext(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("timeseries: flush: %w", err)
	}
	defer conn.Close()
	for _, b := range batches {
		args := make([]any, 0, 2+len(b.keys)+len(b.args))
		args = append(args, flushScript, len(b.keys))
		args = append(args, b.keys...)
		args = append(args, b.args...)
		if err := conn.Send("EVAL", args...); err != nil {
			// Send may have written a full buffer already.
			return 0, true, fmt.Errorf("timeseries: flush: %w", err)
		}
	}
	if err := conn.Flush(); err != nil {
		return 0, true, fmt.Errorf("timeseries: flush: %w", err)
	}
	for i := range batches {
		if _, err := redis.ReceiveContext(conn, ctx); err != nil {
			var serverErr redis.Error
			if errors.As(err, &serverErr) {
				// The script failed inside Redis (a key of the wrong type,
				// say): resending would fail the same way forever.
				r.dropped.Add(batches[i].hits)
				r.onError(fmt.Errorf("timeseries: flush: batch dropped: %w", err))
				continue
			}
			return i, true, fmt.Errorf("timeseries: flush: %w", err)
		}
	}
	return len(batches), true, nil
}

// flushScript applies one batch unless a batch with the same or a later
// seq of this recorder was applied already. All of a batch's HINCRBYs and
// its ZADDs (one per 500 members) happen atomically, so a cleaner never
// sees a written hash that is missing from the known set.
//
// KEYS: marker, known, count key per delta.
// ARGV: seq, marker ttl, n, n field/delta pairs, then known-set members.
const flushScript = `
local seq = tonumber(ARGV[1])
local done = tonumber(redis.call('GET', KEYS[1]) or '0')
if seq <= done then return 0 end
local n = tonumber(ARGV[3])
for i = 1, n do
  redis.call('HINCRBY', KEYS[i + 2], ARGV[2 + 2 * i], ARGV[3 + 2 * i])
end
local members = {}
for j = 4 + 2 * n, #ARGV do
  members[#members + 1] = 0
  members[#members + 1] = ARGV[j]
  if #members == 1000 then
    redis.call('ZADD', KEYS[2], unpack(members))
    members = {}
  end
end
if #members > 0 then redis.call('ZADD', KEYS[2], unpack(members)) end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
`

type bucketKey struct {
	counter int32
	prec    int
	bucket  int64
}

// batchesLocked turns pending hits into batches of per-bucket deltas.
func (r *Recorder) batchesLocked(pending map[pendingKey]int64) []*batch {
	if len(pending) == 0 {
		return nil
	}
	deltas := make(map[bucketKey]int64, len(pending)*len(r.schema.Precisions))
	var hits, newest int64
	for k, n := range pending {
		hits += n
		newest = max(newest, k.sec)
		for i, p := range r.schema.Precisions {
			deltas[bucketKey{k.counter, i, BucketStart(k.sec, p)}] += n
		}
	}
	// The marker outlives every batch that may still be resent.
	ttl := max(r.maxPendingAge*2, 3600)
	var out []*batch
	var cur *batch
	var members map[string]bool
	finish := func() {
		if cur == nil {
			return
		}
		cur.args[2] = (len(cur.keys) - 2)
		for m := range members {
			cur.args = append(cur.args, m)
		}
		out = append(out, cur)
		cur = nil
	}
	for k, d := range deltas {
		if cur == nil {
			r.seq++
			cur = &batch{seq: r.seq, newest: newest,
				keys: []any{r.markerKey, r.schema.KnownKey()},
				args: []any{r.seq, ttl, 0}}
			members = map[string]bool{}
		}
		c := r.counters[k.counter]
		cur.keys = append(cur.keys, c.keys[k.prec])
		cur.args = append(cur.args, strconv.FormatInt(k.bucket, 10), d)
		members[c.members[k.prec]] = true
		if len(cur.keys)-2 >= maxBatchDeltas {
			finish()
		}
	}
	finish()
	// Every hit appears once per precision; count it once, in the first batch.
	out[0].hits = hits
	return out
}

// dropOldLocked drops hits older than MaxPendingAge.
func (r *Recorder) dropOldLocked() {
	cutoff := r.clock.Now().Unix() - r.maxPendingAge
	for k, n := range r.pending {
		if k.sec < cutoff {
			r.dropped.Add(n)
			delete(r.pending, k)
		}
	}
	kept := r.uncertain[:0]
	for _, b := range r.uncertain {
		if b.newest < cutoff {
			r.dropped.Add(b.hits)
			continue
		}
		kept = append(kept, b)
	}
	r.uncertain = kept
}

func (r *Recorder) succeeded(wrote bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inflight = 0
	r.retryAt, r.backoff = time.Time{}, 0
	r.health.RedisUp = true
	r.health.LastError = ""
	if wrote {
		r.health.LastFlush = r.clock.Now()
	}
}

func (r *Recorder) failed(err error) {
	r.mu.Lock()
	if r.backoff == 0 {
		r.backoff = r.interval
	} else {
		r.backoff = min(2*r.backoff, maxBackoff)
	}
	r.retryAt = time.Now().Add(r.backoff)
	r.health.RedisUp = false
	r.health.LastError = err.Error()
	r.health.LastErrorAt = r.clock.Now()
	r.mu.Unlock()
	r.onError(err)
}

// Health returns a snapshot of the recorder's state.
func (r *Recorder) Health() Health {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.health
	h.PendingHits = r.inflight
	for _, n := range r.pending {
		h.PendingHits += n
	}
	for _, b := range r.uncertain {
		h.PendingHits += b.hits
	}
	for _, c := range r.counters {
		for i := range c.shards {
			for j := range c.shards[i].slots {
				h.PendingHits += c.shards[i].slots[j].n.Load()
			}
		}
	}
	h.DroppedHits = r.dropped.Load()
	h.OverflowNames = r.refused.Load()
	h.Series = len(r.names)
	return h
}

// Close stops the flusher and writes everything pending, retrying until
// it succeeds or ctx ends. Hits recorded after Close are not written.
func (r *Recorder) Close(ctx context.Context) error {
	r.closeOnce.Do(func() {
		r.cancel()
		<-r.done
	})
	for {
		err := r.flush(ctx, true)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timeseries: close: %d hits not written: %w", r.Health().PendingHits, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
