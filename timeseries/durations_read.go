package timeseries

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries/internal/latency"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
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
	Window *Histogram
}

// DurationBucket is the histogram of one bucket, starting at Start (unix
// seconds).
type DurationBucket struct {
	Start int64
	Hist  *Histogram
}

// maxDurationBuckets bounds the buckets of one read. Lat keys live for
// series.LatKeptBuckets buckets, so a longer window only adds empty ones.
const maxDurationBuckets = 1024

// ErrNoDurations means the store's recorder keeps no durations, or the
// series' name cannot have any (a name holding braces, see
// Schema.DurationKey).
var ErrNoDurations = errors.New("timeseries: no durations")

// LastDurations reads the durations of the last n buckets of one series,
// ending with the current (still open) one.
func (s *Store) LastDurations(ctx context.Context, name string, precision, n int) (Durations, error) {
	from, to, err := s.lastBuckets("durations", precision, n, maxDurationBuckets)
	if err != nil {
		return Durations{}, err
	}
	return s.Durations(ctx, name, precision, from, to)
}

// Durations reads the durations of one series at one precision in the
// buckets whose starts are in [from, to] (unix seconds), in one round
// trip (one HGETALL per bucket, pipelined). With durations off it
// returns ErrNoDurations. A bucket that fails to decode fails the read:
// its hash was not written by Pulse with the store's mapping.
func (s *Store) Durations(ctx context.Context, name string, precision int, from, to int64) (Durations, error) {
	got, err := s.readDurations(ctx, "durations", []string{name}, precision, from, to)
	if err != nil {
		return Durations{}, err
	}
	d, ok := got[name]
	if !ok {
		return Durations{}, fmt.Errorf("%w: %q holds braces", ErrNoDurations, name)
	}
	return d, nil
}

// DurationsMany reads the durations of several series at one precision,
// in the buckets whose starts are in [from, to], as Durations would read
// each of them, in one round trip (one per node on a cluster). A name
// that cannot have durations (see ErrNoDurations) is left out of the map;
// repeated names are read once. A series with nothing recorded reads as
// empty histograms.
func (s *Store) DurationsMany(ctx context.Context, names []string, precision int, from, to int64) (map[string]Durations, error) {
	return s.readDurations(ctx, "durations many", uniqueNames(names), precision, from, to)
}

// readDurations is Durations and DurationsMany (names without repeats);
// op names the read in its errors.
func (s *Store) readDurations(ctx context.Context, op string, names []string, precision int, from, to int64) (map[string]Durations, error) {
	if s.mapping == nil {
		return nil, ErrNoDurations
	}
	if err := s.schema.CheckPrecision(precision); err != nil {
		return nil, err
	}
	first, _, n := series.BucketSpan(precision, from, to)
	if n > maxDurationBuckets {
		return nil, fmt.Errorf("%w: %d buckets of durations, at most %d", ErrRangeTooLarge, n, maxDurationBuckets)
	}
	var read []string
	var cmds []redisconn.Cmd
	for _, name := range names {
		prefix, ok := s.schema.LatKeyPrefix(precision, name)
		if !ok {
			continue
		}
		read = append(read, name)
		for i := range n {
			key := prefix + strconv.FormatInt(first+i*int64(precision), 10)
			cmds = append(cmds, redisconn.Cmd{Key: key, Name: "HGETALL", Args: []any{key}})
		}
	}
	replies := s.router.DoContext(ctx, cmds, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)})
	out := make(map[string]Durations, len(read))
	hists := latency.NewHistograms(s.mapping, len(replies))
	for j, name := range read {
		d := Durations{Precision: precision, Window: latency.NewHistogram(s.mapping), Buckets: make([]DurationBucket, n)}
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
