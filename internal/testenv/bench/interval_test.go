package bench

import "testing"

func TestMedianInterval(t *testing.T) {
	spread := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		return xs
	}
	for _, tc := range []struct {
		name   string
		xs     []float64
		lo, hi float64 // bounds the interval must keep within
		width  float64 // at least this wide
	}{
		{"constant", []float64{0.97, 0.97, 0.97, 0.97, 0.97}, 0.97, 0.97, 0},
		{"21 spread", spread(21), 6, 16, 2},
		{"one", []float64{0.9}, 0.9, 0.9, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi := medianInterval(tc.xs)
			m := median(tc.xs)
			if lo > m || hi < m {
				t.Errorf("interval %v–%v leaves out the median %v", lo, hi, m)
			}
			if lo < tc.lo || hi > tc.hi {
				t.Errorf("interval %v–%v, want within %v–%v", lo, hi, tc.lo, tc.hi)
			}
			if hi-lo < tc.width {
				t.Errorf("interval %v–%v narrower than %v", lo, hi, tc.width)
			}
		})
	}
	// More rounds of the same spread pin the median down closer.
	lo20, hi20 := medianInterval(repeat(spread(21), 1))
	lo80, hi80 := medianInterval(repeat(spread(21), 4))
	if hi80-lo80 >= hi20-lo20 {
		t.Errorf("84 rounds give %v–%v, no narrower than 21 rounds' %v–%v", lo80, hi80, lo20, hi20)
	}
	if a, b := medianInterval(spread(21)); a != lo20 || b != hi20 {
		t.Errorf("same runs, different interval: %v–%v then %v–%v", lo20, hi20, a, b)
	}
}

func repeat(xs []float64, n int) []float64 {
	var out []float64
	for range n {
		out = append(out, xs...)
	}
	return out
}

// The goal lines give each ratio with its interval, so that a median a
// hair under the line is read as such.
func TestGoalLinesGiveTheInterval(t *testing.T) {
	r := &Report{}
	for round, ratio := range []float64{0.95, 0.96, 0.97, 0.98, 0.99} {
		r.Runs = append(r.Runs, RunResult{Variant: Pulse, Round: round + 1, RatioToBare: ratio})
	}
	want := "pulse >= 0.97 × bare: met (median 0.97, 90 % interval 0.95–0.99 over 5 rounds)"
	if got := r.goals()[0]; got != want {
		t.Errorf("goal line\n got %s\nwant %s", got, want)
	}
}

// The control's line says what a middleware that does nothing reads.
func TestGoalLinesGiveTheControl(t *testing.T) {
	r := &Report{}
	for round, ratio := range []float64{0.97, 0.98, 0.99} {
		r.Runs = append(r.Runs, RunResult{Variant: BareMiddleware, Round: round + 1, RatioToBare: ratio, CPURatioToBare: 1.01})
	}
	want := "control: bare with a middleware that does nothing: throughput median 0.98, 90 % interval 0.97–0.99 over 3 rounds; CPU per request 1.01 × bare"
	if got := r.goals(); len(got) == 0 || got[0] != want {
		t.Errorf("goal lines %q, want first %q", got, want)
	}
}
