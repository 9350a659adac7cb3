package forecast

import (
	"math"
	"testing"
	"time"
)

// bend compares the forecasts of a series with and without one bad
// stretch in its history: the largest change of the expected value in
// half-widths of the clean forecast's 80 % band, and the ratio of the
// mean 95 % band widths.
func bend(t *testing.T, step time.Duration, base float64, ev event, seeds int, off guards) (shift, widen float64) {
	t.Helper()
	for i := range seeds {
		gc := genConfig{Step: step, N: 120, End: genEnd, Base: base, Daily: 0.8, Weekend: 0.3, Trend: 0.01, Disp: 0.05}
		clean := generate(gc, seeded(500, i))
		gc.Events = []event{ev}
		dirty := generate(gc, seeded(500, i))
		var fc [2][]Point
		for j, g := range []*generated{clean, dirty} {
			fd, err := FitWithConfig(g.series(Counts), Config{off: off})
			if err != nil {
				t.Fatal(err)
			}
			fc[j] = fd.Forecast(24)
		}
		worst, wc, wd := 0.0, 0.0, 0.0
		for h := range fc[0] {
			c, d := fc[0][h], fc[1][h]
			worst = math.Max(worst, 2*math.Abs(d.Expected-c.Expected)/(c.Band80.Hi-c.Band80.Lo))
			wc += c.Band95.Hi - c.Band95.Lo
			wd += d.Band95.Hi - d.Band95.Lo
		}
		shift += worst / float64(seeds)
		widen += wd / wc / float64(seeds)
	}
	return shift, widen
}

// How far one bad stretch may move the forecast, in half-widths of its
// 80 % band (averaged over series), and widen its 95 % band. The bands are
// quantiles of the series' own recent errors (the stretch's left out), so
// the stretch's mark on the level and season moves a few of those errors,
// and the quantile with them: a few per cent, where a median scale moved
// less than 5 %.
const (
	maxMove  = 0.5
	maxWiden = 1.10
)

// One spike or outage in the history neither bends the forecast nor
// widens its bands; without cleaning it does one or both.
func TestOneBadStretchDoesNotBend(t *testing.T) {
	for _, c := range []struct {
		name string
		step time.Duration
		base float64
		ev   event
	}{
		{"spike of 15σ at 1h", time.Hour, 200, event{Kind: Spike, At: 70, Len: 1, Size: 15}},
		{"outage of 3 buckets at 1h", time.Hour, 200, event{Kind: Drop, At: 70, Len: 3, Size: 0}},
		{"spike of 15σ at 1m", time.Minute, 100, event{Kind: Spike, At: 90, Len: 1, Size: 15}},
		{"outage of 3 buckets at 5m", 5 * time.Minute, 100, event{Kind: Drop, At: 90, Len: 3, Size: 0}},
		{"spike of 15σ at 1d", day, 5000, event{Kind: Spike, At: 100, Len: 1, Size: 15}},
	} {
		t.Run(c.name, func(t *testing.T) {
			shift, widen := bend(t, c.step, c.base, c.ev, 20, guards{})
			offShift, offWiden := bend(t, c.step, c.base, c.ev, 20, guards{clean: true})
			t.Logf("%s: forecast moves %.3f band at most, bands widen %.3f×; without cleaning %.3f and %.3f×", c.name, shift, widen, offShift, offWiden)
			if shift > maxMove || widen > maxWiden {
				t.Errorf("forecast moved %.3f band (want ≤ %v), bands widened %.3f× (want ≤ %v)", shift, maxMove, widen, maxWiden)
			}
			if offShift <= maxMove && offWiden <= maxWiden {
				t.Errorf("without cleaning it moves %.3f and widens %.3f×: the test does not need the cleaning", offShift, offWiden)
			}
		})
	}
}
