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

// readLast reads one series at several precisions in one round trip per
// Redis node: at each precision, its last n buckets up to the current
// one, missing buckets as zero, oldest first. Precisions the schema does
// not keep, and those at which the series is not in the known set, are
// left out of the map.
func readLast(ctx context.Context, st *timeseries.Store, name string, precisions []int, n int) (map[int][]timeseries.Sample, error) {
	h := series.HandleOf(st)
	now := h.Now().Unix()
	type read struct {
		precision     int
		from, current int64
		fields        []any
	}
	var reads []read
	var cmds []redisconn.Cmd
	known := h.Schema.KnownKey()
	for _, p := range precisions {
		if h.Schema.CheckPrecision(p) != nil {
			continue
		}
		current := series.BucketStart(now, p)
		rd := read{precision: p, from: current - int64(n-1)*int64(p), current: current}
		for t := rd.from; t <= current; t += int64(p) {
			rd.fields = append(rd.fields, strconv.FormatInt(t, 10))
		}
		key := h.Schema.CountKey(p, name)
		reads = append(reads, rd)
		cmds = append(cmds,
			redisconn.Cmd{Key: known, Name: "ZSCORE", Args: []any{known, series.Member(p, name)}},
			redisconn.Cmd{Key: key, Name: "HMGET", Args: append([]any{key}, rd.fields...)})
	}
	out := make(map[int][]timeseries.Sample, len(reads))
	if len(cmds) == 0 {
		return out, nil
	}
	replies := h.Router.Do(cmds, redisconn.Options{Timeout: series.ReadTimeout(ctx)})
	for i, rd := range reads {
		for _, rep := range replies[2*i : 2*i+2] {
			if rep.Err != nil {
				return nil, fmt.Errorf("forecast: read %q at %d: %w", name, rd.precision, rep.Err)
			}
		}
		if replies[2*i].Value == nil {
			continue // not in the known set at this precision
		}
		values, err := redis.Values(replies[2*i+1].Value, nil)
		if err != nil {
			return nil, fmt.Errorf("forecast: read %q at %d: %w", name, rd.precision, err)
		}
		var got []timeseries.Sample
		for j, v := range values {
			if c, err := redis.Int64(v, nil); v != nil && err == nil && j < len(rd.fields) {
				t, _ := strconv.ParseInt(rd.fields[j].(string), 10, 64)
				got = append(got, timeseries.Sample{Time: t, Count: c})
			}
		}
		if out[rd.precision], err = series.FillRange(got, rd.precision, rd.from, rd.current, rd.current); err != nil {
			return nil, fmt.Errorf("forecast: read %q at %d: %w", name, rd.precision, err)
		}
	}
	return out, nil
}
