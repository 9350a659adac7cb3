package timeseries

import (
	"log/slog"
	"time"
)

// Health is a snapshot of a Recorder's state, for status pages and probes.
type Health struct {
	// LastFlush is when deltas last reached Redis; zero if never.
	LastFlush time.Time `json:"last_flush"`
	// LastFlushOK is when a flush last ended without error, whether or
	// not it had hits to write: the flusher is alive and Redis took what
	// it was given.
	LastFlushOK time.Time `json:"last_flush_ok"`
	// LastError is the text of the latest flush error, "" after a success.
	LastError string `json:"last_error,omitempty"`
	// LastErrorAt is when LastError happened.
	LastErrorAt time.Time `json:"last_error_at"`
	// RedisUp is false while the latest flush failed, wholly or on one
	// node or key group: Redis unreachable, or answering with an error
	// such as OOM, READONLY, LOADING or BUSY. LastError says which.
	RedisUp bool `json:"redis_up"`
	// Cluster is true when writing to a Redis Cluster.
	Cluster bool `json:"cluster"`
	// PendingHits are hits recorded but not yet in Redis. A hit is one
	// request counted in one series (a request counted in three series is
	// three hits); it is written as one increment per precision, and a hit
	// written at only some precisions counts in proportion.
	PendingHits int64 `json:"pending_hits"`
	// DroppedHits are hits that will never reach Redis, in the same unit:
	// kept longer than Config.MaxPendingAge while Redis failed, or refused
	// by a key that holds another type (DroppedIncrements ÷ precisions,
	// rounded up).
	DroppedHits int64 `json:"dropped_hits"`
	// DroppedIncrements counts the lost bucket increments themselves: a
	// key of the wrong type at one precision loses one per hit there.
	DroppedIncrements int64 `json:"dropped_increments"`
	// DroppedDurations are request durations that will never reach
	// Redis, counted like DroppedHits: per precision lost, divided by the
	// precisions, rounded up.
	DroppedDurations int64 `json:"dropped_durations"`
	// LastDroppedKey is the last key whose increments Redis refused
	// (WRONGTYPE, or a field that is not an integer).
	LastDroppedKey string `json:"last_dropped_key,omitempty"`
	// OverflowNames counts names refused by the cap on distinct names and
	// folded into the overflow series.
	OverflowNames int64 `json:"overflow_names"`
	// FlushInterval is the recorder's Config.FlushInterval, so a probe can
	// tell a flush that is late.
	FlushInterval time.Duration `json:"flush_interval"`
	// PendingVisitors are visitor ids waiting for Redis, one per series
	// and precision a visitor is counted in.
	PendingVisitors int64 `json:"pending_visitors"`
	// DroppedVisitors are visitor ids that will never reach Redis: kept
	// longer than MaxPendingAge, over the cap on pending ids, refused by
	// a key of another type, or recorded before the day's salt was known.
	DroppedVisitors int64 `json:"dropped_visitors"`
	// Series is the number of distinct series names recorded.
	Series int `json:"series"`
}

// flushStatus is what the latest flushes tell: the Health fields they
// set, the backoff after a failure, and the keys Redis refused. The
// Recorder's mutex guards it.
type flushStatus struct {
	health      Health
	retryAt     time.Time // no background flush before it, after a failure
	backoff     time.Duration
	refusedKeys map[string]struct{}
}

// succeeded clears the backoff and the error after a flush at now.
func (s *flushStatus) succeeded(now time.Time, wrote bool) {
	s.retryAt, s.backoff = time.Time{}, 0
	s.health.RedisUp = true
	s.health.LastError = ""
	s.health.LastFlushOK = now
	if wrote {
		s.health.LastFlush = now
	}
}

// failed records err at now and backs off: from interval, doubling up
// to maxBackoff.
func (s *flushStatus) failed(now time.Time, err error, interval time.Duration) {
	if s.backoff == 0 {
		s.backoff = interval
	} else {
		s.backoff = min(2*s.backoff, maxBackoff)
	}
	s.retryAt = now.Add(s.backoff)
	s.health.RedisUp = false
	s.health.LastError = err.Error()
	s.health.LastErrorAt = now
}

// refused notes a key Redis will never take increments for, naming it in
// the log the first time.
func (s *flushStatus) refused(key string) {
	s.health.LastDroppedKey = key
	if _, seen := s.refusedKeys[key]; !seen && len(s.refusedKeys) < 1000 {
		if s.refusedKeys == nil {
			s.refusedKeys = map[string]struct{}{}
		}
		s.refusedKeys[key] = struct{}{}
		slog.Warn("pulse: recorder: key holds a value Pulse cannot add to; its increments are dropped", "key", key)
	}
}

func (r *Recorder) succeeded(wrote bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status.succeeded(r.clock.Now(), wrote)
}

func (r *Recorder) failed(err error) {
	r.mu.Lock()
	now := r.clock.Now()
	r.status.failed(now, err, r.interval)
	r.ledger.age(now.Unix())
	r.mu.Unlock()
	r.onError(err)
}

// Health returns a snapshot of the recorder's state. Hits are series
// hits: a request counted in three series is three hits. Each hit is one
// increment per precision; a hit written at some precisions but not yet
// at others counts in proportion.
func (r *Recorder) Health() Health {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.status.health
	incr := r.ledger.unsettledIncr()
	np := int64(len(r.schema.Precisions))
	incr += r.counts.ringHitsLocked() * np
	h.PendingHits = ceilDiv(incr, np)
	h.DroppedHits = ceilDiv(r.ledger.dropped, np)
	h.DroppedIncrements = r.ledger.dropped
	h.DroppedDurations = ceilDiv(r.ledger.droppedDurations, np)
	h.OverflowNames = r.counts.refused.Load()
	h.Series = len(r.counts.names)
	h.Cluster = r.sender.router.IsCluster()
	h.FlushInterval = r.interval
	r.visitors.health(&h)
	return h
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
