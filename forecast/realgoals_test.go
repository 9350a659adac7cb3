package forecast

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/race"
)

// realRun is one series at one precision, scored.
type realRun struct {
	series realSeries
	step   time.Duration
	stats  realStats
}

// replayCorpus scores every series of the corpus at each of its
// precisions, online.
func replayCorpus(tb testing.TB, cfg Config) []realRun {
	var jobs []realRun
	for _, s := range realCorpus {
		for _, step := range s.steps {
			jobs = append(jobs, realRun{series: s, step: step})
		}
	}
	parallel(len(jobs), func(j int) {
		r := &jobs[j]
		rs := replaySetFor(tb, r.series.file, r.step)
		for _, st := range replayPlan(rs, r.series) {
			r.stats.merge(replayStretch(tb, rs, st, cfg))
		}
	})
	return jobs
}

// byPrecision pools the runs of each precision.
func byPrecision(runs []realRun) (map[time.Duration]realStats, []time.Duration) {
	pooled := map[time.Duration]realStats{}
	for _, r := range runs {
		s := pooled[r.step]
		s.merge(r.stats)
		pooled[r.step] = s
	}
	var steps []time.Duration
	for p := range pooled {
		steps = append(steps, p)
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i] < steps[j] })
	return pooled, steps
}

// longSeries is the least scored buckets for a series' own coverage to be
// held to the goal.
const longSeries = 500

// On the real corpus, replayed online: the 80 % and 95 % bands cover 80 ±
// 3 % and 95 ± 2 % of the buckets at every precision, no series of at
// least 500 scored buckets falls under 92 % on the 95 % band, and flagged
// runs start at most once per 1,000 buckets at every precision.
func TestRealCorpus(t *testing.T) {
	race.SkipMeasurement(t)
	runs := replayCorpus(t, Config{})
	pooled, steps := byPrecision(runs)
	for _, p := range steps {
		s := pooled[p]
		worst, worstOn := realRun{stats: realStats{n: 1, in95: 1}}, realRun{}
		for _, r := range runs {
			if r.step != p {
				continue
			}
			if r.stats.n >= longSeries && r.stats.cov95() < worst.stats.cov95() {
				worst = r
			}
			if r.stats.onsetsPer1000() > worstOn.stats.onsetsPer1000() {
				worstOn = r
			}
		}
		t.Logf("%-5v %6d buckets: 80 %% band %.3f, 95 %% band %.3f (worst %v %.3f); flagged runs %.2f per 1,000 (worst %v %.2f)",
			p, s.n, s.cov80(), s.cov95(), worst.series, worst.stats.cov95(), s.onsetsPer1000(), worstOn.series, worstOn.stats.onsetsPer1000())
		if c := s.cov95(); c < 0.93 || c > 0.97 {
			t.Errorf("%v: 95 %% band covers %.3f, want 0.95 ± 0.02", p, c)
		}
		if c := s.cov80(); c < 0.77 || c > 0.83 {
			t.Errorf("%v: 80 %% band covers %.3f, want 0.80 ± 0.03", p, c)
		}
		if worst.stats.n >= longSeries && worst.stats.cov95() < 0.92 {
			t.Errorf("%v: %v's 95 %% band covers %.3f, want at least 0.92", p, worst.series, worst.stats.cov95())
		}
		if s.onsetsPer1000() > 1 {
			t.Errorf("%v: %.2f flagged runs per 1,000 buckets, want at most 1", p, s.onsetsPer1000())
		}
	}
	for _, r := range runs {
		t.Log(fmt.Sprintf("  %-26v %-5v %4d: %.3f %.3f  runs %d", r.series, r.step, r.stats.n, r.stats.cov80(), r.stats.cov95(), r.stats.onsets))
	}
}

// Incidents injected into the real series are flagged within three
// buckets of their start, on their side, in at least 9 of 10 cases of
// each kind at every precision.
func TestRealCorpusRecall(t *testing.T) {
	race.SkipMeasurement(t)
	got := replayInjections(t, Config{})
	var steps []time.Duration
	for p := range got {
		steps = append(steps, p)
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i] < steps[j] })
	for _, p := range steps {
		for k, inj := range injections {
			r := got[p][k]
			t.Logf("%-5v %-17s recall %.3f (%d of %d)", p, inj.name, r.recall(), r.found, r.events)
			if r.events > 0 && r.recall() < 0.9 {
				t.Errorf("%v %s: recall %.3f, want at least 0.9", p, inj.name, r.recall())
			}
		}
	}
}
