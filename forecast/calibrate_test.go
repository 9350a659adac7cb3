package forecast

import (
	"math"
	"testing"
)

// Beyond the 95 % quantile of a series' errors a score is read from an
// exponential tail of rate their mean excess beyond the 80 % one: a
// bucket out by one mean excess more than q95 is as unlikely as 5 % times
// 1/e, and the order of far buckets is kept.
func TestTailScore(t *testing.T) {
	c := calibration{q80: 1.5, q95: 3, tail: 1.2}
	for _, tc := range []struct {
		name string
		z    float64
		want float64
	}{
		{"at q80", 1.5, z80},
		{"at q95", 3, z95},
		{"between", 2.25, (z80 + z95) / 2},
		{"one excess out", -4.2, normQuantile(0.05 * math.Exp(-1) / 2)},
		{"ten excesses out", 15, -normQuantile(0.05 * math.Exp(-10) / 2)},
		{"proportional below q80", 0.75, z80 / 2},
	} {
		if got := c.score(tc.z); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: score(%v) = %v, want %v", tc.name, tc.z, got, tc.want)
		}
	}
	prop := calibration{q80: 1.5, q95: 3}
	if got, want := prop.score(6), 2*z95; math.Abs(got-want) > 1e-9 {
		t.Errorf("without a tail, score(6) = %v, want %v", got, want)
	}
	// A normal tail scaled to q95 would call 10 a 6.5σ event; the
	// series' own tail calls it far less rare.
	if got := c.score(10); got >= prop.score(10) || got < 3.5 {
		t.Errorf("score(10) = %v with the tail, %v without: want less, and still beyond 3.5", got, prop.score(10))
	}
	last := 0.0
	for _, z := range []float64{20, 40, 45, 100, 400, 800, 1600} {
		got := c.score(z)
		if math.IsInf(got, 0) || math.IsNaN(got) || got <= last {
			t.Errorf("score(%v) = %v after %v: far buckets must rank, finite", z, got, last)
		}
		last = got
	}
	// Where the inverse error function stops, the asymptote takes over
	// without a step.
	at := math.Log(2e-15)
	if a, b := tailScore(at+1e-9), tailScore(at-1e-9); math.Abs(a-b) > 0.01 {
		t.Errorf("tail score jumps from %v to %v at 1e-15", a, b)
	}
}
