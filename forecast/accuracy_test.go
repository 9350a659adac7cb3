package forecast

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/race"
)

// accuracyCase is a family of generated series judged on buckets held
// out of the fit.
type accuracyCase struct {
	name   string
	kind   Kind
	step   time.Duration
	hold   int // buckets held out and forecast
	season int // of the seasonal naive forecast; 0: none
	base   float64
	ctx    bool // pass the 1 h and 1 d series
	seeds  int
}

type accuracy struct {
	cov                 coverage
	mase, naive, snaive float64 // mean absolute scaled errors, summed over series
}

func runAccuracy(t *testing.T, c accuracyCase, test uint64, cfg Config) accuracy {
	t.Helper()
	var a accuracy
	for i := range c.seeds {
		rng := seeded(test, i)
		end := genEnd.Add(time.Duration(rng.IntN(168)) * time.Hour)
		gc := genConfig{Step: c.step, N: 120 + c.hold, End: end, Base: c.base, Daily: 0.8, Weekend: 0.3, Trend: 0.01, Disp: 0.05}
		if c.step == day {
			gc.Daily = 0
		}
		g := generate(gc, rng)
		cf := cfg
		if c.ctx {
			cut := end.Add(-c.step * time.Duration(c.hold))
			cf.Context = gc.context(c.kind, cut, rand.New(rand.NewPCG(test+1000, uint64(i))))
		}
		r, err := scoreHeldOut(g, c.kind, 120, c.season, cf)
		if err != nil {
			t.Fatal(err)
		}
		a.cov.n += r.cov.n
		a.cov.in80 += r.cov.in80
		a.cov.in95 += r.cov.in95
		h := float64(c.hold)
		a.mase += r.mae / h / r.scale
		a.naive += r.naive / h / r.scale
		a.snaive += r.seasonal / h / r.scale
	}
	return a
}

// The 80 % and 95 % bands of buckets not fitted cover them within five
// points of nominal, at every precision, for every kind.
func TestCoverage(t *testing.T) {
	race.SkipMeasurement(t)
	for i, c := range []accuracyCase{
		{"counts 5s", Counts, 5 * time.Second, 12, 0, 100, true, 40},
		{"counts 1m", Counts, time.Minute, 12, 0, 50, true, 40},
		{"counts 5m", Counts, 5 * time.Minute, 12, 0, 100, true, 40},
		{"counts 1h", Counts, time.Hour, 24, 24, 200, true, 40},
		{"counts 1h busy", Counts, time.Hour, 24, 24, 2000, true, 40},
		{"counts 5h", Counts, 5 * time.Hour, 10, 24, 500, true, 40},
		{"counts 1d", Counts, day, 7, 7, 5000, false, 40},
		{"latency 1h", Latency, time.Hour, 24, 24, 200, true, 40},
		{"latency 1m", Latency, time.Minute, 12, 0, 200, true, 40},
		{"errors 1h", ErrorRatio, time.Hour, 24, 0, 1000, true, 40},
		{"errors 5m", ErrorRatio, 5 * time.Minute, 12, 0, 1000, true, 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := runAccuracy(t, c, uint64(200+i), Config{Kind: c.kind})
			c80, c95 := a.cov.rates()
			t.Logf("%s: %d buckets, 80 %% band covers %.3f, 95 %% band %.3f", c.name, a.cov.n, c80, c95)
			// Five points inclusive: 0.80 - 0.75 is a hair above 0.05 in floating point.
			const within = 0.05 + 1e-9
			if math.Abs(c80-0.80) > within || math.Abs(c95-0.95) > within {
				t.Errorf("coverage %.3f / %.3f, want 0.80 / 0.95 within 0.05", c80, c95)
			}
		})
	}
}

// A route with a few hits a bucket gets bands from its count noise: they
// cover at least their nominal share less five points. Counts are whole,
// so a band cannot cover exactly 80 % of them; it covers more.
func TestCoverageLowVolume(t *testing.T) {
	for i, c := range []accuracyCase{
		{"3 hits an hour", Counts, time.Hour, 24, 24, 3, true, 40},
		{"2 hits a minute", Counts, time.Minute, 12, 0, 2, true, 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := runAccuracy(t, c, uint64(300+i), Config{})
			c80, c95 := a.cov.rates()
			t.Logf("%s: 80 %% band covers %.3f, 95 %% band %.3f", c.name, c80, c95)
			if c80 < 0.75 || c95 < 0.90 {
				t.Errorf("coverage %.3f / %.3f, want at least 0.75 / 0.90", c80, c95)
			}
		})
	}
}

// On seasonal series the forecast beats the seasonal naive one (the same
// bucket a season before) by 15 % at least, in mean absolute scaled
// error; without a season it is no worse than the naive one (the last
// value). Without its season the forecast loses that edge.
func TestPointAccuracy(t *testing.T) {
	race.SkipMeasurement(t)
	for i, c := range []accuracyCase{
		{"1h daily", Counts, time.Hour, 24, 24, 200, true, 40},
		{"1h daily quiet", Counts, time.Hour, 24, 24, 30, true, 40},
		{"1d weekly", Counts, day, 7, 7, 5000, false, 40},
		{"latency 1h", Latency, time.Hour, 24, 24, 200, true, 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := runAccuracy(t, c, uint64(400+i), Config{Kind: c.kind})
			ratio := a.mase / a.snaive
			t.Logf("%s: MASE %.3f, seasonal naive %.3f, ratio %.3f", c.name, a.mase/float64(c.seeds), a.snaive/float64(c.seeds), ratio)
			if ratio > 0.85 {
				t.Errorf("MASE ratio %.3f to the seasonal naive, want at most 0.85", ratio)
			}
			if c.kind != Counts {
				return // latency's daily swing is small beside its noise
			}
			off := runAccuracy(t, c, uint64(400+i), Config{Kind: c.kind, off: guards{season: true}})
			if r := off.mase / off.snaive; r <= 0.85 {
				t.Errorf("without its season the ratio is %.3f: the test does not need the season", r)
			}
		})
	}
	for i, c := range []accuracyCase{
		{"5h, no context: its own 5-day phases", Counts, 5 * time.Hour, 10, 0, 500, false, 40},
		{"5m no context", Counts, 5 * time.Minute, 12, 0, 100, false, 80},
		{"1m no context", Counts, time.Minute, 12, 0, 50, false, 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := runAccuracy(t, c, uint64(450+i), Config{Kind: c.kind})
			ratio := a.mase / a.naive
			t.Logf("%s: MASE %.3f, naive %.3f, ratio %.3f", c.name, a.mase/float64(c.seeds), a.naive/float64(c.seeds), ratio)
			if ratio > 1 {
				t.Errorf("MASE ratio %.3f to the naive, want at most 1", ratio)
			}
		})
	}
}
