package forecast

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/race"
)

// detectCase is a family of generated series with one injected event each.
type detectCase struct {
	name  string
	kind  Kind
	step  time.Duration
	base  float64
	ev    event // At is counted back from the end when negative
	seeds int
}

// runDetect fits every series of c and tallies recall and false flags.
func runDetect(t *testing.T, c detectCase, test uint64, cfg Config) detection {
	t.Helper()
	var d detection
	for i := range c.seeds {
		rng := seeded(test, i)
		end := genEnd.Add(time.Duration(rng.IntN(168)) * time.Hour)
		gc := genConfig{Step: c.step, N: 120, End: end, Base: c.base, Daily: 0.8, Weekend: 0.3, Trend: 0.01, Disp: 0.05}
		var ev *event
		if c.ev.Kind != "" {
			e := c.ev
			e.At = 120 - 8 - rng.IntN(20) // late in the history, where a reader looks
			ev = &e
			gc.Events = []event{e}
		}
		g := generate(gc, rng)
		if ev != nil && ev.Kind == Drop && g.mean[ev.At] < 20 {
			continue // the stated size: at least 20 hits a bucket
		}
		cf := cfg
		cf.Kind = c.kind
		if c.step < day {
			cf.Context = gc.context(c.kind, end, rand.New(rand.NewPCG(test+1000, uint64(i))))
		}
		fd, err := FitWithConfig(g.series(c.kind), cf)
		if err != nil {
			t.Fatal(err)
		}
		d.add(g, fd, ev)
	}
	return d
}

// The stated sizes: what each precision catches, at the defaults, in at
// least 9 of 10 cases within 3 buckets, with at most 1 false flag per
// 1,000 normal buckets: a spike of 4σ, a drop to zero for 3 buckets of at
// least 20 hits, a level shift of 30 %, at every precision. σ is the
// standard deviation of a bucket's noise.
var detectCases = func() []detectCase {
	var cs []detectCase
	for _, p := range []struct {
		name string
		step time.Duration
		base float64 // hits a bucket
	}{
		{"5s", 5 * time.Second, 60}, {"1m", time.Minute, 100}, {"5m", 5 * time.Minute, 100},
		{"1h", time.Hour, 100}, {"5h", 5 * time.Hour, 500}, {"1d", day, 3000},
	} {
		cs = append(cs,
			detectCase{"spike 4σ for 3 buckets at " + p.name, Counts, p.step, p.base, event{Kind: Spike, Len: 3, Size: 4}, 60},
			detectCase{"drop to zero for 3 buckets at " + p.name, Counts, p.step, p.base, event{Kind: Drop, Len: 3, Size: 0}, 60},
			detectCase{"level shift +30% at " + p.name, Counts, p.step, 20 * p.base, event{Kind: LevelShift, Size: 0.3}, 60},
			detectCase{"level shift -30% at " + p.name, Counts, p.step, 20 * p.base, event{Kind: LevelShift, Size: -0.3}, 60})
	}
	return append(cs,
		detectCase{"latency x2 for 3 buckets at 1m", Latency, time.Minute, 100, event{Kind: LatencyRegression, Len: 3, Size: 2}, 60},
		detectCase{"latency x2 for 3 buckets at 1h", Latency, time.Hour, 100, event{Kind: LatencyRegression, Len: 3, Size: 2}, 60},
		detectCase{"errors x3 for 3 buckets at 5m", ErrorRatio, 5 * time.Minute, 1000, event{Kind: ErrorSurge, Len: 3, Size: 3}, 60},
		detectCase{"errors x3 for 3 buckets at 1h", ErrorRatio, time.Hour, 1000, event{Kind: ErrorSurge, Len: 3, Size: 3}, 60},
		detectCase{"no event at 5s", Counts, 5 * time.Second, 20, event{}, 300},
		detectCase{"no event at 1m", Counts, time.Minute, 100, event{}, 300},
		detectCase{"no event at 5m", Counts, 5 * time.Minute, 100, event{}, 300},
		detectCase{"no event at 1h, 3 hits an hour", Counts, time.Hour, 3, event{}, 300},
		detectCase{"no event at 1h", Counts, time.Hour, 300, event{}, 300},
		detectCase{"no event at 1h, 2000 hits an hour", Counts, time.Hour, 2000, event{}, 300},
		detectCase{"no event at 5h", Counts, 5 * time.Hour, 500, event{}, 300},
		detectCase{"no event at 1d", Counts, day, 3000, event{}, 300},
		detectCase{"no event in latency at 1h", Latency, time.Hour, 300, event{}, 300},
		detectCase{"no event in errors at 5m", ErrorRatio, 5 * time.Minute, 300, event{}, 300},
	)
}()

// seedBases are the sets of seeds every detection row runs over, pooled:
// a row judged on one set can pass or fail by the luck of a few series.
var seedBases = []uint64{100, 500, 900, 1300, 1700}

// runPooled is runDetect over every seed base, tallied together.
func runPooled(t *testing.T, c detectCase, i int, cfg Config) detection {
	var all detection
	for _, base := range seedBases {
		all.merge(runDetect(t, c, base+uint64(i), cfg))
	}
	return all
}

// blurredRecall is the recall asked of the events a season estimated
// from a few cycles blurs (TestRunSumCatchesBlurredEvents), 0.9 of the
// rest. A score reads a bucket beyond the 95 % band against an
// exponential tail of the series' own errors, which real traffic's are
// (docs/forecasts.md); the generator's noise is lighter-tailed than
// that, so a 4σ bucket of it scores a little under 4, and a few of these
// events stay under the thresholds that keep real traffic's false
// incidents down.
const blurredRecall = 0.85

var blurred = map[string]bool{
	"spike 4σ for 3 buckets at 1h": true, "level shift +30% at 1h": true,
	"spike 4σ for 3 buckets at 5h": true, "spike 4σ for 3 buckets at 1d": true,
}

func TestDetection(t *testing.T) {
	race.SkipMeasurement(t)
	for i, c := range detectCases {
		t.Run(c.name, func(t *testing.T) {
			d := runPooled(t, c, i, Config{})
			t.Logf("%s: recall %d of %d, false flags %.2f per 1,000 normal buckets (%d of %d)", c.name, d.found, d.events, d.falsePer1000(), d.falses, d.normal)
			want := 0.9
			if blurred[c.name] {
				want = blurredRecall
			}
			if d.events > 0 && d.recall() < want {
				t.Errorf("recall %.3f, want at least %.2f", d.recall(), want)
			}
			if d.falsePer1000() > 1 {
				t.Errorf("%.2f false flags per 1,000 buckets, want at most 1", d.falsePer1000())
			}
		})
	}
}

// From 1 h up the expectation leans on seasons estimated from a few of
// their cycles (at 5 h, lent by the 1 h series; at 1 d, under a trend over
// four months), which blurs each bucket's score: a spike of 4σ or a shift
// of 30 % moves it a little less than the band catches in each bucket.
// The sum of a run of scores catches them, though a bucket is under the
// band; without it, recall falls.
func TestRunSumCatchesBlurredEvents(t *testing.T) {
	race.SkipMeasurement(t)
	for i, c := range []detectCase{
		{"spike 4σ for 3 buckets at 1h", Counts, time.Hour, 100, event{Kind: Spike, Len: 3, Size: 4}, 60},
		{"level shift +30% at 1h", Counts, time.Hour, 2000, event{Kind: LevelShift, Size: 0.3}, 60},
		{"spike 4σ for 3 buckets at 5h", Counts, 5 * time.Hour, 500, event{Kind: Spike, Len: 3, Size: 4}, 60},
		{"spike 4σ for 3 buckets at 1d", Counts, day, 3000, event{Kind: Spike, Len: 3, Size: 4}, 60},
	} {
		on := runPooled(t, c, 150+i, Config{})
		off := runPooled(t, c, 150+i, Config{off: guards{runSum: true}})
		t.Logf("%s: recall %.3f, %.3f without the run's sum", c.name, on.recall(), off.recall())
		if on.recall() < blurredRecall || off.recall() >= on.recall() {
			t.Errorf("%s: recall %.3f (want ≥ %.2f), without the run's sum %.3f (want less)", c.name, on.recall(), blurredRecall, off.recall())
		}
	}
}

// At 1 d a trend over four months leaves a level that follows it with a
// small trend gain behind: every bucket's error grows, its scale with it,
// and a 4σ spike scores less. With the steeper gain in the grid, more
// spikes are caught and fewer false flags raised; the gain is small (the
// band does more), so the test asks only that both move the right way.
func TestDailyTrendGainCatchesSpikes(t *testing.T) {
	race.SkipMeasurement(t)
	c := detectCase{"spike 4σ for 3 buckets at 1d", Counts, day, 3000, event{Kind: Spike, Len: 3, Size: 4}, 200}
	var on, off detection
	for test := uint64(170); test < 173; test++ {
		a := runDetect(t, c, test, Config{})
		b := runDetect(t, c, test, Config{off: guards{steepTrend: true}})
		on.merge(a)
		off.merge(b)
	}
	t.Logf("recall %.3f, %.3f without the steeper gain; false flags %.2f and %.2f per 1,000", on.recall(), off.recall(), on.falsePer1000(), off.falsePer1000())
	if on.recall() <= off.recall() || on.falsePer1000() >= off.falsePer1000() || on.falsePer1000() > 1 {
		t.Errorf("recall %.3f, %.2f false flags per 1,000; without the steeper gain %.3f and %.2f (want more recall, fewer flags, at most 1)",
			on.recall(), on.falsePer1000(), off.recall(), off.falsePer1000())
	}
}

// Without persistence every noisy bucket out of band is an incident: the
// false ones the tests above bound come back. Pooled over the seed bases,
// as TestDetection's rows are: one set of 40 series holds a few dozen
// incidents at most, too few to read a rate of one in 1,000 from.
func TestPersistenceGuardsFalseFlags(t *testing.T) {
	race.SkipMeasurement(t)
	c := detectCase{"no event at 1h", Counts, time.Hour, 300, event{}, 40}
	var on, off detection
	for _, base := range seedBases {
		on.merge(runDetect(t, c, 190+base, Config{}))
		off.merge(runDetect(t, c, 190+base, Config{off: guards{persistence: true}}))
	}
	t.Logf("false flags per 1,000: %.2f with persistence, %.2f without", on.falsePer1000(), off.falsePer1000())
	if on.falsePer1000() > 1 || off.falsePer1000() <= 1 {
		t.Errorf("false flags %.2f with persistence (want ≤ 1), %.2f without (want > 1)", on.falsePer1000(), off.falsePer1000())
	}
}

// A route with a few hits a bucket raises no flag from its count noise:
// scored by its own Poisson or negative binomial distribution, a 6 where
// 2 are expected is not the event a normal curve would make of it.
func TestLowVolumeRaisesNoFlags(t *testing.T) {
	race.SkipMeasurement(t)
	var on, off detection
	for i, c := range []detectCase{
		{"3 hits an hour", Counts, time.Hour, 3, event{}, 100},
		{"2 hits a minute", Counts, time.Minute, 2, event{}, 100},
	} {
		a := runDetect(t, c, uint64(160+i), Config{})
		b := runDetect(t, c, uint64(160+i), Config{off: guards{discrete: true}})
		t.Logf("%s: %.2f false flags per 1,000 buckets; %.2f scored as normal", c.name, a.falsePer1000(), b.falsePer1000())
		on.normal, on.falses = on.normal+a.normal, on.falses+a.falses
		off.normal, off.falses = off.normal+b.normal, off.falses+b.falses
	}
	if on.falsePer1000() > 1 {
		t.Errorf("%.2f false flags per 1,000 buckets, want at most 1", on.falsePer1000())
	}
	if off.falsePer1000() <= 1 {
		t.Errorf("scored as normal, %.2f false flags per 1,000: the test does not need the count distribution", off.falsePer1000())
	}
}

// A flagged run ends at the first bucket back in band, and its buckets no
// longer count toward the next flag: otherwise one noisy bucket after a
// spike completes two of three with the spike's own, a false flag.
func TestFlagWindowEndsWithTheRun(t *testing.T) {
	race.SkipMeasurement(t)
	var on, off detection
	for i, c := range detectCases {
		if c.ev.Kind != Spike && c.ev.Kind != Drop {
			continue
		}
		on.merge(runDetect(t, c, uint64(300+i), Config{}))
		off.merge(runDetect(t, c, uint64(300+i), Config{off: guards{window: true}}))
	}
	t.Logf("false flags in the 3 buckets after %d events: %d, %d when the window runs on", on.events, on.after, off.after)
	if on.found != off.found || 2*on.after > off.after {
		t.Errorf("after the events %d false flags, %d without the window's end (want at most half); found %d and %d (want the same)", on.after, off.after, on.found, off.found)
	}
}
