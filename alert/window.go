package alert

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries"
)

// keptSamples is how many buckets Pulse's cleaner keeps of each series.
const keptSamples = 120

// span is a time window [From, To) in unix seconds, read at Precision.
type span struct {
	From, To  int64
	Precision int
}

// pickPrecision is the finest of precisions that holds a window of
// length w ending lookback before now within at most maxBuckets buckets
// and within the buckets the cleaner keeps; the coarsest when none does.
// Fewer buckets per window keep an evaluation of many routes cheap; the
// oldest bucket, cut by the window, counts in proportion.
func pickPrecision(precisions []int, w, lookback time.Duration, maxBuckets int) int {
	for _, p := range precisions { // ascending
		pd := time.Duration(p) * time.Second
		if w <= time.Duration(maxBuckets)*pd && w+lookback <= (keptSamples-1)*pd {
			return p
		}
	}
	return precisions[len(precisions)-1]
}

// windowOf is the window of length w ending lookback before now.
func windowOf(now time.Time, w, lookback time.Duration, p int) span {
	to := now.Add(-lookback).Unix()
	return span{From: to - int64(w/time.Second), To: to, Precision: p}
}

// windowSum adds the counts of samples (buckets at precision p) that
// fall in [from, to). A bucket cut by the window counts in proportion to
// the part of it inside, out of the part of it that has passed by now:
// the current bucket, still filling, counts whole when the window ends
// now.
func windowSum(samples []timeseries.Sample, p int, from, to, now int64) float64 {
	var sum float64
	for _, s := range samples {
		start, end := s.Time, s.Time+int64(p)
		passed := min(end, now) - start
		in := min(end, to) - max(start, from)
		if passed <= 0 || in <= 0 {
			continue
		}
		if in >= passed {
			sum += float64(s.Count)
		} else {
			sum += float64(s.Count) * float64(in) / float64(passed)
		}
	}
	return sum
}

// readPlan gathers, per precision, the series an evaluation reads and
// the oldest second each one needs, so that each precision is one
// pipeline: one round trip per Redis node.
type readPlan map[int]*precisionRead

type precisionRead struct {
	names []string
	from  map[string]int64
}

func (rp readPlan) want(name string, w span) {
	r := rp[w.Precision]
	if r == nil {
		r = &precisionRead{from: map[string]int64{}}
		rp[w.Precision] = r
	}
	if f, ok := r.from[name]; !ok {
		r.names = append(r.names, name)
		r.from[name] = w.From
	} else {
		r.from[name] = min(f, w.From)
	}
}

// readData is what a plan read: samples by precision, then name.
type readData map[int]map[string][]timeseries.Sample

// sum is the count of name over w; a name not read counts 0.
func (d readData) sum(name string, w span, now int64) float64 {
	return windowSum(d[w.Precision][name], w.Precision, w.From, w.To, now)
}

// read runs the plan: per precision, in ascending order, one HMGET per
// series of the buckets from its oldest second to now that c does not
// hold settled, all in one pipeline; the buckets that ended more than
// settle before now go to c. A hash that does not exist reads as no
// samples: Pulse writes no bucket for a time without requests.
func (rp readPlan) read(ctx context.Context, r *redisconn.Router, schema timeseries.Schema, now int64, c *settled, settle time.Duration) (readData, error) {
	ps := make([]int, 0, len(rp))
	for p := range rp {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	out := make(readData, len(ps))
	for _, p := range ps {
		m, err := rp[p].read(ctx, r, schema, p, now, c, timeseries.BucketStart(now-int64(settle/time.Second), p))
		if err != nil {
			return nil, fmt.Errorf("alert: read at %d s: %w", p, err)
		}
		out[p] = m
	}
	return out, nil
}

// read reads the plan's series at precision p; the buckets that start
// before unsettled are settled.
func (pr *precisionRead) read(ctx context.Context, r *redisconn.Router, schema timeseries.Schema, p int, now int64,
	c *settled, unsettled int64) (map[string][]timeseries.Sample, error) {
	last := timeseries.BucketStart(now, p)
	fieldsFrom := map[int64][]any{} // shared by the reads that start alike
	starts := make([]int64, len(pr.names))
	kept := make([][]timeseries.Sample, len(pr.names))
	cmds := make([]redisconn.Cmd, len(pr.names))
	for i, name := range pr.names {
		from := timeseries.BucketStart(pr.from[name], p)
		from, kept[i] = c.lookup(p, name, from)
		fields, ok := fieldsFrom[from]
		if !ok {
			for t := from; t <= last; t += int64(p) {
				fields = append(fields, strconv.FormatInt(t, 10))
			}
			fieldsFrom[from] = fields
		}
		key := schema.CountKey(p, name)
		cmds[i] = redisconn.Cmd{Key: key, Name: "HMGET", Args: append([]any{key}, fields...)}
		starts[i] = from
	}
	replies := r.DoContext(ctx, cmds, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)})
	out := make(map[string][]timeseries.Sample, len(pr.names))
	for i, rep := range replies {
		if rep.Err != nil {
			return nil, rep.Err
		}
		values, _ := rep.Value.([]any)
		samples := kept[i]
		for j, v := range values {
			b, ok := v.([]byte)
			if !ok {
				continue // no such bucket
			}
			if n, ok := parseCount(b); ok {
				samples = append(samples, timeseries.Sample{Time: starts[i] + int64(j*p), Count: n})
			}
		}
		name := pr.names[i]
		out[name] = samples
		c.keep(p, name, timeseries.BucketStart(pr.from[name], p), samples, unsettled)
	}
	return out, nil
}

// parseCount reads a bucket's count without allocating; false for
// anything but a decimal integer.
func parseCount(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		n, err := strconv.ParseInt(string(b), 10, 64)
		return n, err == nil
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
