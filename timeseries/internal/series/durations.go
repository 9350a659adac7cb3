package series

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries/internal/latency"
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
	got, err := h.readDurations(ctx, "durations", []string{name}, precision, from, to)
	if err != nil {
		return Durations{}, err
	}
	d, ok := got[name]
	if !ok {
		return Durations{}, fmt.Errorf("%w: %q holds braces", ErrNoDurations, name)
	}
	return d, nil
}

// DurationsMany is Durations for several series (names without repeats),
// in one round trip per node. A name that cannot have durations is left
// out of the map.
func (h Handle) DurationsMany(ctx context.Context, names []string, precision int, from, to int64) (map[string]Durations, error) {
	return h.readDurations(ctx, "durations many", names, precision, from, to)
}

// readDurations is Durations and DurationsMany; op names the read in its
// errors.
func (h Handle) readDurations(ctx context.Context, op string, names []string, precision int, from, to int64) (map[string]Durations, error) {
	if h.Latency == nil {
		return nil, ErrNoDurations
	}
	if err := h.Keys.CheckPrecision(precision); err != nil {
		return nil, err
	}
	first, _, n := BucketSpan(precision, from, to)
	if n > MaxDurationBuckets {
		return nil, fmt.Errorf("%w: %d buckets of durations, at most %d", ErrRangeTooLarge, n, MaxDurationBuckets)
	}
	var read []string
	var cmds []redisconn.Cmd
	for _, name := range names {
		prefix, ok := h.Keys.LatKeyPrefix(precision, name)
		if !ok {
			continue
		}
		read = append(read, name)
		for i := range n {
			key := prefix + strconv.FormatInt(first+i*int64(precision), 10)
			cmds = append(cmds, redisconn.Cmd{Key: key, Name: "HGETALL", Args: []any{key}})
		}
	}
	replies := h.Router.DoContext(ctx, cmds, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)})
	out := make(map[string]Durations, len(read))
	hists := latency.NewHistograms(h.Latency, len(replies))
	for j, name := range read {
		d := Durations{Precision: precision, Window: latency.NewHistogram(h.Latency), Buckets: make([]DurationBucket, n)}
		for i := range n {
			k := int64(j)*n + i
			reply, err := redis.Values(replies[k].Value, replies[k].Err)
			if err != nil {
				return nil, fmt.Errorf("timeseries: %s: %w", op, err)
			}
			hist := &hists[k]
			if err := latency.DecodeReply(hist, reply); err != nil {
				return nil, fmt.Errorf("timeseries: %s: %s: %w", op, cmds[k].Key, err)
			}
			_ = d.Window.Merge(hist) // same mapping
			d.Buckets[i] = DurationBucket{Start: first + i*int64(precision), Hist: hist}
		}
		out[name] = d
	}
	return out, nil
}
