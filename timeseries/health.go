package timeseries

import "time"

// Health is a snapshot of a Recorder's state, for status pages and probes.
type Health struct {
	// LastFlush is when deltas last reached Redis; zero if never.
	LastFlush time.Time `json:"last_flush"`
	// LastError is the text of the latest flush error, "" after a success.
	LastError string `json:"last_error,omitempty"`
	// LastErrorAt is when LastError happened.
	LastErrorAt time.Time `json:"last_error_at"`
	// RedisUp is false while the latest flush attempt failed.
	RedisUp bool `json:"redis_up"`
	// PendingHits are hits recorded but not yet in Redis.
	PendingHits int64 `json:"pending_hits"`
	// DroppedHits were dropped because Redis stayed unreachable longer
	// than Config.MaxPendingAge.
	DroppedHits int64 `json:"dropped_hits"`
	// OverflowNames counts names refused by the cap on distinct names and
	// folded into the overflow series.
	OverflowNames int64 `json:"overflow_names"`
	// Series is the number of distinct series names recorded.
	Series int `json:"series"`
}
