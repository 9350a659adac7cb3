package timeseries

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// BucketQuery names one series and the buckets BucketsMany reads of it,
// by start time.
type BucketQuery struct {
	Name  string
	Times []int64
}

// Buckets is what BucketsMany found of one series: per bucket asked for,
// in the query's order, its count and whether its field is there. A
// field that is not an integer is there with count zero, as a read of
// samples skips it.
type Buckets struct {
	Counts  []int64
	Present []bool
}

// BucketsMany reads the buckets each query names at precision, in one
// pipelined round per node, without checking the known set: what a
// reader needs that keeps a window of every series in memory and reads
// again only the buckets that may have changed since. The answers are in
// the order of queries.
func (s *Store) BucketsMany(ctx context.Context, precision int, queries []BucketQuery) ([]Buckets, error) {
	if err := s.schema.CheckPrecision(precision); err != nil {
		return nil, err
	}
	n := 0
	for _, q := range queries {
		n += len(q.Times)
	}
	cmds := make([]redisconn.Cmd, 0, len(queries))
	all := make([]any, 0, n+len(queries)) // every command's arguments, in one array
	fields := map[int64]any{}             // each time formatted once, whatever the queries
	for _, q := range queries {
		if len(q.Times) == 0 {
			continue
		}
		key := s.schema.CountKey(precision, q.Name)
		start := len(all)
		all = append(all, key)
		for _, t := range q.Times {
			f, ok := fields[t]
			if !ok {
				f = strconv.FormatInt(t, 10)
				fields[t] = f
			}
			all = append(all, f)
		}
		cmds = append(cmds, redisconn.Cmd{Key: key, Name: "HMGET", Args: all[start:len(all):len(all)]})
	}
	results := s.router.Do(cmds, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)})
	out := make([]Buckets, len(queries))
	counts, present := make([]int64, n), make([]bool, n) // one backing array for all
	next := 0
	for i, q := range queries {
		if len(q.Times) == 0 {
			continue
		}
		rep := results[next]
		next++
		if rep.Err != nil {
			return nil, fmt.Errorf("timeseries: buckets many: %w", rep.Err)
		}
		k := len(q.Times)
		b := Buckets{Counts: counts[:k:k], Present: present[:k:k]}
		counts, present = counts[k:], present[k:]
		if err := fillBuckets(b, rep.Value); err != nil {
			return nil, fmt.Errorf("timeseries: buckets many: %q: %w", q.Name, err)
		}
		out[i] = b
	}
	return out, nil
}

// fillBuckets parses an HMGET reply into b.
func fillBuckets(b Buckets, reply any) error {
	values, err := redis.Values(reply, nil)
	if err != nil {
		return err
	}
	if len(values) != len(b.Counts) {
		return fmt.Errorf("%d values for %d fields", len(values), len(b.Counts))
	}
	for i, v := range values {
		if v == nil {
			continue
		}
		b.Present[i] = true
		// Not an integer: zero, as a read of samples skips it.
		if raw, ok := v.([]byte); ok {
			if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				b.Counts[i] = n
			}
		}
	}
	return nil
}
