package timeseries

import "time"

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
	// LastDroppedKey is the last key whose increments Redis refused
	// (WRONGTYPE, or a field that is not an integer).
	LastDroppedKey string `json:"last_dropped_key,omitempty"`
	// OverflowNames counts names refused by the cap on distinct names and
	// folded into the overflow series.
	OverflowNames int64 `json:"overflow_names"`
	// FlushInterval is the recorder's Config.FlushInterval, so a probe can
	// tell a flush that is late.
	FlushInterval time.Duration `json:"flush_interval"`
	// Series is the number of distinct series names recorded.
	Series int `json:"series"`
}
