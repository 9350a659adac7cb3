package forecast

import (
	"slices"
	"sort"
	"sync"
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

// defaultRuns keeps the replay at the defaults, which two tests score: a
// replay that failed is not kept.
var defaultRuns struct {
	sync.Mutex
	runs []realRun
}

// replayDefaults is replayCorpus(tb, Config{}), replayed once per test
// binary. The runs returned are the caller's own copy.
func replayDefaults(tb testing.TB) []realRun {
	defaultRuns.Lock()
	defer defaultRuns.Unlock()
	if defaultRuns.runs == nil {
		runs := replayCorpus(tb, Config{})
		if tb.Failed() {
			return runs
		}
		defaultRuns.runs = runs
	}
	return slices.Clone(defaultRuns.runs)
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

// goal is a bound a figure must keep: the goal, or, where this
// corpus misses it, a bound a little past the figure measured, so that
// it gets no worse (docs/forecasts.md lists each miss and what limits it).
type goal struct {
	bound float64
	held  bool // the goal is missed; bound only holds the figure
}

func (g goal) check(t *testing.T, what string, got float64, atMost bool) {
	t.Helper()
	if (atMost && got > g.bound) || (!atMost && got < g.bound) {
		word := "goal"
		if g.held {
			word = "bound held while the goal is missed"
		}
		t.Errorf("%s: %.3f, past its %s %.3f", what, got, word, g.bound)
	}
}

// realGoals are the bounds of each precision's figures on the corpus.
var realGoals = map[time.Duration]struct {
	cov95lo, cov95hi, cov80lo, cov80hi, worst95, onsets goal
}{
	// Whole counts of a few hits a bucket cannot hold exactly 80 or 95 %.
	5 * time.Second: {goal{0.93, false}, goal{0.98, true}, goal{0.77, false}, goal{0.86, true}, goal{0.92, false}, goal{1.5, true}},
	time.Minute:     {goal{0.93, false}, goal{0.97, false}, goal{0.77, false}, goal{0.83, false}, goal{0.92, false}, goal{3, true}},
	5 * time.Minute: {goal{0.93, false}, goal{0.97, false}, goal{0.77, false}, goal{0.83, false}, goal{0.83, true}, goal{4.8, true}},
	time.Hour:       {goal{0.92, true}, goal{0.97, false}, goal{0.76, true}, goal{0.83, false}, goal{0.87, true}, goal{10.5, true}},
	5 * time.Hour:   {goal{0.93, false}, goal{0.97, false}, goal{0.77, false}, goal{0.83, false}, goal{0.92, false}, goal{2.6, true}},
	day:             {goal{0.93, false}, goal{0.97, false}, goal{0.77, false}, goal{0.83, false}, goal{0.91, true}, goal{10.5, true}},
}

// On the real corpus, replayed online: the 80 % and 95 % bands cover 80 ±
// 3 % and 95 ± 2 % of the buckets at every precision, no series of at
// least 500 scored buckets falls under 92 % on the 95 % band, and
// incidents begin at most once per 1,000 buckets at every precision (an
// incident re-opened within its recovery is the one begun: flagLog);
// where the corpus misses a goal, realGoals holds the figure.
func TestRealCorpus(t *testing.T) {
	race.SkipMeasurement(t)
	runs := replayDefaults(t)
	pooled, steps := byPrecision(runs)
	for _, p := range steps {
		s, g := pooled[p], realGoals[p]
		worst, worstOn := realRun{stats: realStats{n: 1, in95: 1}}, realRun{}
		for _, r := range runs {
			if r.step != p {
				continue
			}
			if r.stats.n >= longSeries && r.stats.cov95() < worst.stats.cov95() {
				worst = r
			}
			if r.stats.falsePer1000() > worstOn.stats.falsePer1000() {
				worstOn = r
			}
		}
		t.Logf("%-5v %6d buckets: 80 %% band %.3f, 95 %% band %.3f (worst %v %.3f); incidents begun %.2f per 1,000, %.2f but at outages (worst %v %.2f); flagged runs begun but at outages %.2f",
			p, s.n, s.cov80(), s.cov95(), worst.series, worst.stats.cov95(), s.onsetsPer1000(), s.falsePer1000(), worstOn.series, worstOn.stats.falsePer1000(), s.falseRunsPer1000())
		g.cov95lo.check(t, p.String()+" 95 % band", s.cov95(), false)
		g.cov95hi.check(t, p.String()+" 95 % band", s.cov95(), true)
		g.cov80lo.check(t, p.String()+" 80 % band", s.cov80(), false)
		g.cov80hi.check(t, p.String()+" 80 % band", s.cov80(), true)
		if worst.stats.n >= longSeries {
			g.worst95.check(t, p.String()+" "+worst.series.name+"'s 95 % band", worst.stats.cov95(), false)
		}
		g.onsets.check(t, p.String()+" incidents begun per 1,000 buckets but at outages", s.falsePer1000(), true)
	}
	for _, r := range runs {
		t.Logf("  %-26v %-5v %4d: %.3f %.3f  incidents %d, %d at outages; flagged runs %d", r.series, r.step, r.stats.n, r.stats.cov80(), r.stats.cov95(), r.stats.onsets, r.stats.outages, r.stats.runs)
	}
}

// recallHeld holds the recall of the kinds and precisions where the
// corpus misses 0.9; the rest are held to it. Kinds with fewer than
// minEvents detectable incidents at a precision are reported, not held.
var recallHeld = map[string]float64{
	"1h0m0s spike x3": 0.7, "1h0m0s drop to zero": 0.88, "1h0m0s level -50%": 0.75, "5h0m0s spike x3": 0.6,
	"24h0m0s level -50%": 0.85,
}

const minEvents = 20

// Incidents injected into the real series are flagged within three
// buckets of their start, on their side, in at least 9 of 10 cases of
// each kind at every precision (recallHeld where the corpus misses it).
func TestRealCorpusRecall(t *testing.T) {
	race.SkipMeasurement(t)
	got := replayInjections(t, Config{})
	for _, p := range sortedSteps(got) {
		for k, inj := range injections {
			r := got[p][k]
			t.Logf("%-5v %-17s recall %.3f (%d of %d)", p, inj.name, r.recall(), r.found, r.events)
			if r.events < minEvents {
				continue
			}
			g := goal{0.9, false}
			if b, ok := recallHeld[p.String()+" "+inj.name]; ok {
				g = goal{b, true}
			}
			g.check(t, p.String()+" "+inj.name+" recall", r.recall(), false)
		}
	}
	surges := replayErrorSurges(t)
	for _, p := range sortedSteps(surges) {
		r := surges[p]
		t.Logf("%-5v %-17s recall %.3f (%d of %d), errors drawn at %.0f %% of the real volume", p, "errors x3", r.recall(), r.found, r.events, 100*errorShare)
		if r.events >= minEvents {
			goal{0.9, false}.check(t, p.String()+" errors x3 recall", r.recall(), false)
		}
	}
}

// Ten buckets after a burst of three buckets at six times the series' own,
// the 95 % band is on average at most 1.2 times as wide as it is at the
// same bucket without the burst: flagged buckets do not widen the bands
// (at 5 s and 5 h, where the corpus misses it, burstHeld holds it).
func TestRealCorpusBurst(t *testing.T) {
	race.SkipMeasurement(t)
	burstHeld := map[time.Duration]float64{5 * time.Second: 1.3, 5 * time.Hour: 1.3}
	got := replayBursts(t, Config{})
	for _, p := range sortedSteps(got) {
		b := got[p]
		mean := b.sumClean / float64(b.n)
		t.Logf("%-5v %3d bursts: band after %.3f× the band without the burst (worst %.2f×), %.3f× the band before it", p, b.n, mean, b.worst, b.sumPre/float64(b.n))
		g := goal{1.2, false}
		if h, ok := burstHeld[p]; ok {
			g = goal{h, true}
		}
		g.check(t, p.String()+" band after a burst, as a share of the band without", mean, true)
	}
}

func sortedSteps[V any](m map[time.Duration]V) []time.Duration {
	var steps []time.Duration
	for p := range m {
		steps = append(steps, p)
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i] < steps[j] })
	return steps
}
