package forecast

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// The recordings hold request counts, not status classes: an error surge
// is judged on errors drawn on their real volume (binomial, at errorShare
// of each bucket's requests), three times as many for three buckets.

const errorShare = 0.02

var errorSets sync.Map

// errorsOf draws the errors of rs's own buckets, the same on every run.
func errorsOf(rs replaySet) []float64 {
	key := rs.own.name + "@" + time.Duration(rs.own.step*int64(time.Second)).String()
	if v, ok := errorSets.Load(key); ok {
		return v.([]float64)
	}
	rng := rand.New(rand.NewPCG(uint64(len(rs.own.v)), uint64(rs.own.step)))
	out := make([]float64, len(rs.own.v))
	for i, h := range rs.own.v {
		mu := h * errorShare
		out[i] = math.Min(h, math.Max(0, math.Round(mu+math.Sqrt(mu*(1-errorShare))*rng.NormFloat64())))
		if mu < 30 {
			out[i] = math.Min(h, poisson(rng, mu))
		}
	}
	errorSets.Store(key, out)
	return out
}

// errorFit fits the error ratio of the window ending at bucket i, its
// errors from at on times factor (at most the hits) for 3 buckets.
func errorFit(rs replaySet, errs []float64, i, at int, factor float64) (*Fitted, error) {
	lo := i + 1 - replayWindow
	hits := rs.own.v[lo : i+1]
	e := append([]float64(nil), errs[lo:i+1]...)
	for k := range e {
		if b := lo + k; b >= at && b < at+3 {
			e[k] = math.Min(hits[k], e[k]*factor)
		}
	}
	s := Series{Name: rs.own.name, Step: time.Duration(rs.own.step) * time.Second, Start: rs.own.time(lo), Values: e, Hits: hits}
	return FitWithConfig(s, Config{Kind: ErrorRatio})
}

// errorSurgeAt reports whether a surge at bucket at counts (it adds three
// binomial deviations of the errors expected to its buckets on average,
// no incident before it) and whether it was flagged within recallLead
// buckets.
func errorSurgeAt(rs replaySet, errs []float64, at int) (counts, found bool) {
	change, mu := 0.0, 0.0 // the mean change the surge makes, the mean errors expected
	for b := at; b < at+3 && b < len(errs); b++ {
		change += math.Min(rs.own.v[b], 3*errs[b]) - errs[b]
		mu += rs.own.v[b] * errorShare
	}
	if mu == 0 || change/3 < detectableSigmas*math.Sqrt(mu/3) {
		return false, false
	}
	before, err := errorFit(rs, errs, at-1, at, 1)
	if err != nil || before.History[len(before.History)-1].Anomaly != nil {
		return false, false
	}
	for t := at; t <= at+recallLead && t < len(rs.own.v); t++ {
		fd, err := errorFit(rs, errs, t, at, 3)
		if err == nil && fd.History[len(fd.History)-1].Anomaly != nil {
			return true, true
		}
	}
	return true, false
}

// replayErrorSurges tallies the recall of error surges per precision.
func replayErrorSurges(tb testing.TB) map[time.Duration]recallTally {
	var jobs []realRun
	for _, s := range realCorpus {
		for _, step := range s.steps {
			jobs = append(jobs, realRun{series: s, step: step})
		}
	}
	tallies := make([]recallTally, len(jobs))
	parallel(len(jobs), func(j int) {
		rs := replaySetFor(tb, jobs[j].series.file, jobs[j].step)
		errs := errorsOf(rs)
		for _, at := range injectionPoints(rs, jobs[j].series) {
			if counts, found := errorSurgeAt(rs, errs, at); counts {
				tallies[j].events++
				if found {
					tallies[j].found++
				}
			}
		}
	})
	out := map[time.Duration]recallTally{}
	for j, r := range jobs {
		t := out[r.step]
		t.merge(tallies[j])
		out[r.step] = t
	}
	return out
}
