package alert

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// durationPlan gathers, per precision, the series whose durations an
// evaluation reads and the oldest second it needs, so that each
// precision is one DurationsMany: one round trip per Redis node.
type durationPlan map[int]*durationRead

type durationRead struct {
	names []string
	seen  map[string]bool
	from  int64
	got   map[string]timeseries.Durations
	err   error // ErrNoDurations: the recorder keeps none
}

func (dp durationPlan) want(name string, w span) {
	r := dp[w.Precision]
	if r == nil {
		r = &durationRead{seen: map[string]bool{}, from: w.From}
		dp[w.Precision] = r
	}
	if !r.seen[name] {
		r.seen[name] = true
		r.names = append(r.names, name)
	}
	r.from = min(r.from, w.From)
}

// read runs the plan, in ascending precision. A store without durations
// leaves the latency rules unknown rather than failing the evaluation.
func (dp durationPlan) read(ctx context.Context, st *timeseries.Store, now int64) error {
	ps := make([]int, 0, len(dp))
	for p := range dp {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	for _, p := range ps {
		r := dp[p]
		from := r.from - r.from%int64(p) // the oldest bucket the windows cut
		got, err := st.DurationsMany(ctx, r.names, p, from, now)
		if errors.Is(err, timeseries.ErrNoDurations) {
			r.err = err
			continue
		}
		if err != nil {
			return fmt.Errorf("alert: read durations at %d s: %w", p, err)
		}
		r.got = got
	}
	return nil
}

// slowAndAll are the requests of name slower than threshold, and all of
// them, over w, the buckets the window cuts counting in proportion as
// windowSum counts hits. ok is false when no durations could be read.
func (dp durationPlan) slowAndAll(name string, w span, threshold time.Duration, now int64) (slow, all float64, ok bool) {
	r := dp[w.Precision]
	if r == nil || r.err != nil {
		return 0, 0, false
	}
	d := r.got[name]
	slows := make([]timeseries.Sample, len(d.Buckets))
	alls := make([]timeseries.Sample, len(d.Buckets))
	for i, b := range d.Buckets {
		slows[i] = timeseries.Sample{Time: b.Start, Count: int64(slowCount(b.Hist, threshold))}
		alls[i] = timeseries.Sample{Time: b.Start, Count: int64(b.Hist.Count())}
	}
	return windowSum(slows, w.Precision, w.From, w.To, now), windowSum(alls, w.Precision, w.From, w.To, now), true
}

// mapping is the bins of the durations read; nil when none were.
func (dp durationPlan) mapping() *timeseries.DurationMapping {
	for _, r := range dp {
		for _, d := range r.got {
			return d.Window.Mapping()
		}
	}
	return nil
}

// thresholdEdge is the bin edge of m nearest to t by ratio, as the index
// of the bin it tops (lo-1 for the underflow bin's top), and that edge.
// Durations in the bins above it are the slow ones.
func thresholdEdge(m *timeseries.DurationMapping, t time.Duration) (int, time.Duration) {
	lo, hi := m.Bins()
	k := m.Index(t)
	switch {
	case k == timeseries.UnderflowBin:
		k = lo - 1
	case k == timeseries.OverflowBin:
		k = hi // beyond the tracked range only the top edge is known
	case float64(t)*float64(t) < m.Upper(k-1)*m.Upper(k):
		k-- // nearer the bin's lower edge
	}
	return k, time.Duration(math.Round(m.Upper(k)))
}

// slowCount is how many of h's durations lie above the bin edge nearest
// to threshold.
func slowCount(h *timeseries.Histogram, threshold time.Duration) uint64 {
	m := h.Mapping()
	k, _ := thresholdEdge(m, threshold)
	lo, hi := m.Bins()
	if k < lo {
		return h.Count() - h.Bin(timeseries.UnderflowBin)
	}
	n := h.Bin(timeseries.OverflowBin)
	for i := k + 1; i <= hi; i++ {
		n += h.Bin(i)
	}
	return n
}

// planLatencies adds what the Latency rules among rules read to rp or
// dp and returns their observers: a rule whose threshold the recorders
// count reads its slow series like errors (planSlowCounts); one they do
// not, and a series whose slow series cannot be named, the histograms.
func planLatencies(rules []Rule, in planInput, rp readPlan, dp durationPlan) []observer {
	var obs []observer
	for i := range rules {
		r := &rules[i]
		if r.Kind != Latency {
			continue
		}
		names := r.targets(in.routes)
		since, counted := in.slowSince[timeseries.ThresholdText(r.Threshold.Std())]
		var rest []string
		if counted {
			var countable []string
			for _, n := range names {
				if timeseries.ValidateName(timeseries.SlowSeries(n, r.Threshold.Std())) == nil {
					countable = append(countable, n)
				} else {
					rest = append(rest, n)
				}
			}
			obs = append(obs, planSlowCounts(r, countable, in, rp, since))
		} else {
			rest = names
		}
		if len(rest) > 0 {
			obs = append(obs, planLatency(r, rest, in, dp))
		}
	}
	return obs
}

// planLatency is planAvailability with slow requests for errors: the
// burn rate of a window is its share of requests slower than the
// threshold over the budget, 1 - Target.
func planLatency(r *Rule, names []string, in planInput, dp durationPlan) observer {
	pairs := burnPairs(r, in)
	for _, n := range names {
		for _, p := range pairs {
			dp.want(n, p.long)
			dp.want(n, p.short)
		}
	}
	budget := 1 - r.Target/100
	now := in.now.Unix()
	threshold := r.Threshold.Std()
	return func(_ context.Context, _ readData) []observation {
		var out []observation
		edge := ""
		if m := dp.mapping(); m != nil {
			_, e := thresholdEdge(m, threshold)
			edge = e.String() // a bin edge: fractions of a millisecond matter
			if e%time.Millisecond == 0 {
				edge = formatDuration(e)
			}
		}
		for _, n := range names {
			known := true
			burn := func(s span) float64 {
				slow, all, ok := dp.slowAndAll(n, s, threshold, now)
				known = known && ok
				if all <= 0 {
					return 0 // no requests burn no budget
				}
				return slow / all / budget
			}
			first := len(out)
			out = appendBurns(out, r, n, pairs, burn)
			for i := first; i < len(out); i++ {
				out[i].unknown = !known
				if edge != "" {
					setAnnotation(&out[i], "latency_threshold", edge)
				}
			}
		}
		return out
	}
}
