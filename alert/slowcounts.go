package alert

import (
	"context"
	"slices"
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// SlowThresholds are the thresholds of the Latency rules among rules,
// each once: what a recorder is to count slow requests at
// (timeseries.Config.SlowThresholds) for those rules to read counts
// rather than histograms.
func SlowThresholds(rules []Rule) []time.Duration {
	var out []time.Duration
	seen := map[Duration]bool{}
	for _, r := range rules {
		if r.Kind == Latency && r.Threshold > 0 && !seen[r.Threshold] {
			seen[r.Threshold] = true
			out = append(out, r.Threshold.Std())
		}
	}
	return out
}

// planSlowCounts is planAvailability with the requests slower than the
// rule's threshold, as the recorders counted them, for the errors. The
// windows start no earlier than since, when the recorders began counting
// them: before it the hits had no slow count to hold against.
func planSlowCounts(r *Rule, names []string, in planInput, rp readPlan, since time.Time) observer {
	pairs := burnPairs(r, in)
	threshold := r.Threshold.Std()
	for _, n := range names {
		for _, p := range pairs {
			for _, s := range []span{p.long, p.short} {
				rp.want(n, s)
				rp.want(timeseries.SlowSeries(n, threshold), s)
			}
		}
	}
	budget := 1 - r.Target/100
	now, from := in.now.Unix(), since.Unix()
	return func(_ context.Context, d readData) []observation {
		var out []observation
		for _, n := range names {
			slow := timeseries.SlowSeries(n, threshold)
			burn := func(s span) float64 {
				s.From = max(s.From, from)
				total := d.sum(n, s, now)
				if total <= 0 || s.From >= s.To {
					return 0 // no requests burn no budget
				}
				return d.sum(slow, s, now) / total / budget
			}
			first := len(out)
			out = appendBurns(out, r, n, pairs, burn)
			for i := first; i < len(out); i++ {
				setAnnotation(&out[i], "latency_threshold", threshold.String())
			}
		}
		return out
	}
}

// warnUncounted logs each latency rule whose threshold Config.Recorder
// does not count: unless other instances' recorders count it, the rule
// reads the histograms, at many times the cost.
func (e *Evaluator) warnUncounted() {
	rec, ok := e.cfg.Recorder.(interface{ SlowThresholds() []time.Duration })
	if !ok {
		return
	}
	counted := rec.SlowThresholds()
	for _, r := range e.rules {
		if r.Kind == Latency && !slices.Contains(counted, r.Threshold.Std()) {
			e.cfg.Logger.Warn("pulse: alert: the recorder does not count the requests slower than this latency rule's threshold, so the rule reads the duration histograms: give the recorder timeseries.Config.SlowThresholds = alert.SlowThresholds(rules)",
				"rule", r.Name, "threshold", r.Threshold.Std())
		}
	}
}
