package forecast

import (
	"math"
	"slices"
	"testing"
	"time"
)

// Odd but valid input fits without panicking and yields finite bands.
func TestOddInputs(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gaps := flat(120, 5)
	for i := range gaps {
		if i%3 != 0 {
			gaps[i] = math.NaN()
		}
	}
	ramp := make([]float64, 120)
	for i := range ramp {
		ramp[i] = float64(i * i)
	}
	for _, c := range []struct {
		name string
		s    Series
		kind Kind
	}{
		{"all zero", Series{Step: time.Hour, Start: start, Values: flat(120, 0)}, Counts},
		{"constant", Series{Step: time.Minute, Start: start, Values: flat(120, 7)}, Counts},
		{"huge", Series{Step: time.Minute, Start: start, Values: flat(120, 1e12)}, Counts},
		{"gaps", Series{Step: time.Hour, Start: start, Values: gaps}, Counts},
		{"steep ramp", Series{Step: day, Start: start, Values: ramp}, Counts},
		{"six values", Series{Step: 5 * time.Hour, Start: start, Values: flat(6, 3)}, Counts},
		{"before 1970", Series{Step: time.Hour, Start: time.Unix(-1e6, 0), Values: flat(60, 9)}, Counts},
		{"no errors", Series{Step: time.Minute, Start: start, Values: flat(120, 0), Hits: flat(120, 50)}, ErrorRatio},
		{"all errors", Series{Step: time.Minute, Start: start, Values: flat(120, 50), Hits: flat(120, 50)}, ErrorRatio},
		{"idle hits", Series{Step: time.Minute, Start: start, Values: append(flat(60, 0), flat(60, 1)...), Hits: append(flat(60, 0), flat(60, 2)...)}, ErrorRatio},
		{"latency with idle buckets", Series{Step: time.Minute, Start: start, Values: append(flat(60, 0), flat(60, 0.2)...)}, Latency},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := slices.Clone(c.s.Values)
			fd, err := FitWithConfig(c.s, Config{Kind: c.kind})
			if err != nil {
				t.Fatal(err)
			}
			// The fit works on counts in place: it must not write to them.
			if !slices.EqualFunc(before, c.s.Values, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
				t.Fatalf("the fit changed the caller's values")
			}
			for _, p := range fd.Forecast(30) {
				if math.IsNaN(p.Expected) || math.IsInf(p.Band95.Hi, 0) || math.IsNaN(p.Band95.Lo) || p.Band95.Lo > p.Band95.Hi {
					t.Fatalf("forecast point %+v", p)
				}
			}
		})
	}
}
