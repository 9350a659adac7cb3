package timeseries

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// Visitors are one series' unique visitors over a window of buckets at
// one precision, as HyperLogLog estimates (about 0.81 % standard error).
type Visitors struct {
	Precision int
	// Buckets has one entry per bucket start of the window, oldest first;
	// a bucket without visitors (or expired) counts 0.
	Buckets []VisitorBucket
	// Window is the visitors of the whole window, each counted once
	// however many buckets saw them: the union of the buckets' sketches,
	// not the sum of their counts.
	Window int64
}

// VisitorBucket is the visitors of the bucket starting at Start (unix
// seconds).
type VisitorBucket struct {
	Start int64
	Count int64
}

// maxVisitorBuckets bounds the buckets of one read: the union is one
// PFCOUNT over all of them, which merges every sketch on the server while
// it serves nothing else, a cost that grows with the buckets
// (BenchmarkReadVisitors measures it). 256 is twice the window the
// dashboard charts.
const maxVisitorBuckets = 256

// ErrNoVisitors means no visitors are kept at that precision (a
// *VisitorPrecisionError), or the series' name cannot have any (a name
// holding braces, see Schema.VisitorKey).
var ErrNoVisitors = series.ErrNoVisitors

// LastVisitors reads the visitors of the last n buckets of one series,
// ending with the current (still open) one.
func (s *Store) LastVisitors(ctx context.Context, name string, precision, n int) (Visitors, error) {
	from, to, err := s.lastBuckets("visitors", precision, n, maxVisitorBuckets)
	if err != nil {
		return Visitors{}, err
	}
	return s.Visitors(ctx, name, precision, from, to)
}

// Visitors reads the unique visitors of one series at one precision in
// the buckets whose starts are in [from, to]: a PFCOUNT per bucket and
// one over all of them for the window, pipelined in one round trip to
// the node holding them (the keys share a slot).
func (s *Store) Visitors(ctx context.Context, name string, precision int, from, to int64) (Visitors, error) {
	if err := s.schema.CheckVisitorPrecision(precision); err != nil {
		return Visitors{}, err
	}
	first, _, n := series.BucketSpan(precision, from, to)
	if n > maxVisitorBuckets {
		return Visitors{}, fmt.Errorf("%w: %d buckets of visitors, at most %d", ErrRangeTooLarge, n, maxVisitorBuckets)
	}
	prefix, ok := s.schema.VisitorKeyPrefix(precision, name)
	if !ok {
		return Visitors{}, fmt.Errorf("%w: %q holds braces", ErrNoVisitors, name)
	}
	out := Visitors{Precision: precision, Buckets: make([]VisitorBucket, n)}
	if n == 0 {
		return out, nil
	}
	cmds := make([]redisconn.Cmd, n+1)
	keys := make([]any, n)
	for i := range out.Buckets {
		out.Buckets[i].Start = first + int64(i)*int64(precision)
		key := fmt.Sprint(prefix, out.Buckets[i].Start)
		keys[i] = key
		cmds[i] = redisconn.Cmd{Key: key, Name: "PFCOUNT", Args: []any{key}}
	}
	cmds[n] = redisconn.Cmd{Key: cmds[0].Key, Name: "PFCOUNT", Args: keys}
	counts, err := pfcounts(s.router.DoContext(ctx, cmds, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)}))
	if err != nil {
		return Visitors{}, fmt.Errorf("timeseries: visitors: %w", err)
	}
	for i := range out.Buckets {
		out.Buckets[i].Count = counts[i]
	}
	out.Window = counts[n]
	return out, nil
}

// CurrentVisitors reads the visitors of each of names in the current
// bucket at precision, by the store's clock: one PFCOUNT per series,
// pipelined (one round trip per node on a cluster). A name that cannot
// keep visitors is left out; one without any counts 0.
func (s *Store) CurrentVisitors(ctx context.Context, names []string, precision int) (map[string]int64, error) {
	if err := s.schema.CheckVisitorPrecision(precision); err != nil {
		return nil, err
	}
	bucket := series.BucketStart(s.clock.Now().Unix(), precision)
	var kept []string
	var cmds []redisconn.Cmd
	for _, name := range names {
		if key, ok := s.schema.VisitorKey(precision, name, bucket); ok {
			kept = append(kept, name)
			cmds = append(cmds, redisconn.Cmd{Key: key, Name: "PFCOUNT", Args: []any{key}})
		}
	}
	out := make(map[string]int64, len(kept))
	if len(cmds) == 0 {
		return out, nil
	}
	counts, err := pfcounts(s.router.DoContext(ctx, cmds, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)}))
	if err != nil {
		return nil, fmt.Errorf("timeseries: current visitors: %w", err)
	}
	for i, name := range kept {
		out[name] = counts[i]
	}
	return out, nil
}

// pfcounts are the integer replies of PFCOUNTs, or the first error.
func pfcounts(reps []redisconn.Reply) ([]int64, error) {
	out := make([]int64, len(reps))
	for i, rep := range reps {
		n, err := redis.Int64(rep.Value, rep.Err)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}
