package timeseries

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/latency"
	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/internal/series"
)

// DurationsMany reads the durations of several series at one precision,
// in the buckets whose starts are in [from, to], as Durations would read
// each of them, in one round trip (one per node on a cluster). A name
// that cannot have durations (see ErrNoDurations) is left out of the map;
// repeated names are read once. A series with nothing recorded reads as
// empty histograms.
func (s *Store) DurationsMany(ctx context.Context, names []string, precision int, from, to int64) (map[string]Durations, error) {
	if s.mapping == nil {
		return nil, ErrNoDurations
	}
	if err := s.schema.CheckPrecision(precision); err != nil {
		return nil, err
	}
	first, _, n := series.BucketSpan(precision, from, to)
	if n > series.MaxDurationBuckets {
		return nil, fmt.Errorf("%w: %d buckets of durations, at most %d", ErrRangeTooLarge, n, series.MaxDurationBuckets)
	}
	var read []string
	var cmds []redisconn.Cmd
	for _, name := range uniqueNames(names) {
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
				return nil, fmt.Errorf("timeseries: durations many: %w", err)
			}
			hist := &hists[k]
			if err := latency.DecodeReply(hist, reply); err != nil {
				return nil, fmt.Errorf("timeseries: durations many: %s: %w", cmds[k].Key, err)
			}
			_ = d.Window.Merge(hist) // same mapping
			d.Buckets[i] = DurationBucket{Start: first + i*int64(precision), Hist: hist}
		}
		out[name] = d
	}
	return out, nil
}
