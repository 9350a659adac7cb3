package fromstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/internal/series"
	"github.com/pulse-dev/pulse/timeseries"
)

// readLast reads series at several precisions in one round trip per
// Redis node: for each name and precision, its last n buckets up to the
// current one, missing buckets as zero, oldest first. Precisions the
// schema does not keep, and those at which a series is not in the known
// set, are left out of its map.
func readLast(ctx context.Context, st *timeseries.Store, names []string, precisions []int, n int) (map[string]map[int][]timeseries.Sample, error) {
	h := series.HandleOf(st)
	now := h.Now().Unix()
	type read struct {
		name      string
		precision int
		from      int64
		fields    []any
	}
	var reads []read
	var cmds []redisconn.Cmd
	known := h.Schema.KnownKey()
	for _, p := range precisions {
		if h.Schema.CheckPrecision(p) != nil {
			continue
		}
		current := series.BucketStart(now, p)
		from := current - int64(n-1)*int64(p)
		fields := make([]any, 0, n)
		for t := from; t <= current; t += int64(p) {
			fields = append(fields, strconv.FormatInt(t, 10))
		}
		for _, name := range names {
			key := h.Schema.CountKey(p, name)
			reads = append(reads, read{name, p, from, fields})
			cmds = append(cmds,
				redisconn.Cmd{Key: known, Name: "ZSCORE", Args: []any{known, series.Member(p, name)}},
				redisconn.Cmd{Key: key, Name: "HMGET", Args: append([]any{key}, fields...)})
		}
	}
	out := make(map[string]map[int][]timeseries.Sample, len(names))
	if len(cmds) == 0 {
		return out, nil
	}
	replies := h.Router.Do(cmds, redisconn.Options{Timeout: series.ReadTimeout(ctx)})
	for i, rd := range reads {
		for _, rep := range replies[2*i : 2*i+2] {
			if rep.Err != nil {
				return nil, fmt.Errorf("forecast: read %q at %d: %w", rd.name, rd.precision, rep.Err)
			}
		}
		if replies[2*i].Value == nil {
			continue // not in the known set at this precision
		}
		samples, err := parseLast(replies[2*i+1].Value, rd.precision, rd.from, len(rd.fields))
		if err != nil {
			return nil, fmt.Errorf("forecast: read %q at %d: %w", rd.name, rd.precision, err)
		}
		if out[rd.name] == nil {
			out[rd.name] = make(map[int][]timeseries.Sample, len(precisions))
		}
		out[rd.name][rd.precision] = samples
	}
	return out, nil
}

// parseLast pairs an HMGET reply with the window's buckets, oldest
// first; a bucket absent, or holding what Pulse does not write, is zero.
func parseLast(reply any, precision int, from int64, n int) ([]timeseries.Sample, error) {
	values, err := redis.Values(reply, nil)
	if err != nil {
		return nil, err
	}
	if len(values) != n {
		return nil, fmt.Errorf("%d values for %d buckets", len(values), n)
	}
	out := make([]timeseries.Sample, n)
	for j, v := range values {
		out[j].Time = from + int64(j)*int64(precision)
		if b, ok := v.([]byte); ok {
			out[j].Count, _ = strconv.ParseInt(string(b), 10, 64)
		}
	}
	return out, nil
}
