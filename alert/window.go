package alert

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/pulse-dev/pulse/internal/series"
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
// the oldest second it needs, so that each precision is one SamplesMany:
// one round trip per Redis node.
type readPlan map[int]*precisionRead

type precisionRead struct {
	names []string
	seen  map[string]bool
	from  int64
}

func (rp readPlan) want(name string, w span) {
	r := rp[w.Precision]
	if r == nil {
		r = &precisionRead{seen: map[string]bool{}, from: w.From}
		rp[w.Precision] = r
	}
	if !r.seen[name] {
		r.seen[name] = true
		r.names = append(r.names, name)
	}
	r.from = min(r.from, w.From)
}

// readData is what a plan read: samples by precision, then name.
type readData map[int]map[string][]timeseries.Sample

// sum is the count of name over w; a name not read or not known counts 0.
func (d readData) sum(name string, w span, now int64) float64 {
	return windowSum(d[w.Precision][name], w.Precision, w.From, w.To, now)
}

// read runs the plan: one SamplesMany per precision, in ascending order.
func (rp readPlan) read(ctx context.Context, st *timeseries.Store, now int64) (readData, error) {
	ps := make([]int, 0, len(rp))
	for p := range rp {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	out := make(readData, len(ps))
	for _, p := range ps {
		r := rp[p]
		rg := timeseries.Range{From: series.BucketStart(r.from, p), To: series.BucketStart(now, p)}
		m, err := st.SamplesMany(ctx, r.names, p, rg)
		if err != nil {
			return nil, fmt.Errorf("alert: read at %d s: %w", p, err)
		}
		out[p] = m
	}
	return out, nil
}
