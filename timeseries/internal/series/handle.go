package series

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries/internal/latency"
)

// Handle is what a timeseries.Store reads through: its connections, its
// schema (defaults filled in), its clock and its duration mapping.
type Handle struct {
	Router *redisconn.Router
	Keys   Keys
	Clock  interface{ Now() time.Time }
	// Latency is the mapping request durations are binned by: the
	// recorder's, or the default one for a Store; nil when the recorder
	// keeps no durations.
	Latency *latency.Mapping
}

// Now is the time by the handle's clock: the bucket holding it is the
// still-open one, and zero-filled reads end there.
func (h Handle) Now() time.Time { return h.Clock.Now() }

// Ping sends PING through the handle's pool and returns nil when Redis
// answers PONG. On a cluster it asks the node serving the known set, the
// node every listing of the series needs. It writes and reads nothing, so
// a probe can call it as often as it likes.
func (h Handle) Ping(ctx context.Context) error {
	known := h.Keys.KnownKey()
	rep := h.Router.DoContext(ctx, []redisconn.Cmd{{Key: known, Name: "PING"}}, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)})[0]
	if rep.Err != nil {
		return fmt.Errorf("timeseries: ping: %w", rep.Err)
	}
	if pong, _ := redis.String(rep.Value, nil); pong != "PONG" {
		return fmt.Errorf("timeseries: ping: answered %v, not PONG", rep.Value)
	}
	return nil
}

// lastBuckets is the window of the last n buckets at precision, ending
// with the current (still open) bucket by the handle's clock; n must be
// from 1 to limit. what names the read in the error.
func (h Handle) lastBuckets(what string, precision, n, limit int) (from, to int64, err error) {
	if n <= 0 || n > limit {
		return 0, 0, fmt.Errorf("timeseries: %s: %d buckets, want 1 to %d", what, n, limit)
	}
	to = BucketStart(h.Now().Unix(), precision)
	return to - int64(n-1)*int64(precision), to, nil
}
