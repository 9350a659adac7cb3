package series

import (
	"context"
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/latency"
	"github.com/pulse-dev/pulse/internal/redisconn"
)

// Durations are one series' request durations over a window of buckets
// at one precision.
type Durations struct {
	Precision int
	// Buckets has one entry per bucket start of the window, oldest first;
	// a bucket with nothing recorded (or expired) has an empty histogram.
	Buckets []DurationBucket
	// Window is every bucket merged: bin for bin the histogram of all the
	// window's durations, so its quantiles hold the mapping's accuracy.
	Window *latency.Histogram
}

// DurationBucket is the histogram of one bucket, starting at Start (unix
// seconds).
type DurationBucket struct {
	Start int64
	Hist  *latency.Histogram
}

// MaxDurationBuckets bounds the buckets of one read. Lat keys live for
// LatKeptBuckets buckets, so a longer window only adds empty ones.
const MaxDurationBuckets = 1024

// ErrNoDurations means the handle's recorder keeps no durations, or the
// series' name cannot have any (see LatKeyPrefix).
var ErrNoDurations = errors.New("timeseries: no durations")

// LastDurations reads the last n buckets of one series at one precision,
// ending with the current (still open) bucket by the handle's clock.
func (h Handle) LastDurations(ctx context.Context, name string, precision, n int) (Durations, error) {
	from, to, err := h.lastBuckets("durations", precision, n, MaxDurationBuckets)
	if err != nil {
		return Durations{}, err
	}
	return h.Durations(ctx, name, precision, from, to)
}

// Durations reads the buckets of one series at one precision whose starts
// are in [from, to], in one round trip to the node holding them (one
// HGETALL per bucket, pipelined). A bucket that fails to decode fails the
// read: its hash was not written by Pulse with the handle's mapping.
func (h Handle) Durations(ctx context.Context, name string, precision int, from, to int64) (Durations, error) {
	if h.Latency == nil {
		return Durations{}, ErrNoDurations
	}
	if err := h.Keys.CheckPrecision(precision); err != nil {
		return Durations{}, err
	}
	first, _, n := BucketSpan(precision, from, to)
	if n > MaxDurationBuckets {
		return Durations{}, fmt.Errorf("%w: %d buckets of durations, at most %d", ErrRangeTooLarge, n, MaxDurationBuckets)
	}
	prefix, ok := h.Keys.LatKeyPrefix(precision, name)
	if !ok {
		return Durations{}, fmt.Errorf("%w: %q holds braces", ErrNoDurations, name)
	}
	out := Durations{Precision: precision, Window: latency.NewHistogram(h.Latency)}
	cmds := make([]redisconn.Cmd, n)
	for i := range cmds {
		key := fmt.Sprint(prefix, first+int64(i)*int64(precision))
		cmds[i] = redisconn.Cmd{Key: key, Name: "HGETALL", Args: []any{key}}
	}
	for i, rep := range h.Router.DoContext(ctx, cmds, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)}) {
		if rep.Err != nil {
			return Durations{}, fmt.Errorf("timeseries: durations: %w", rep.Err)
		}
		fields, err := redis.StringMap(rep.Value, nil)
		if err != nil {
			return Durations{}, fmt.Errorf("timeseries: durations: %w", err)
		}
		hist, err := latency.Decode(h.Latency, fields)
		if err != nil {
			return Durations{}, fmt.Errorf("timeseries: durations: %s: %w", cmds[i].Key, err)
		}
		_ = out.Window.Merge(hist) // same mapping
		out.Buckets = append(out.Buckets, DurationBucket{Start: first + int64(i)*int64(precision), Hist: hist})
	}
	return out, nil
}
