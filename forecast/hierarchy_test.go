package forecast

import (
	"math"
	"testing"
	"time"
)

// A bucket of several hours that straddles midnight takes each day's
// factor for its own hours: 22:00 to 03:00 from a Friday is two hours of
// Friday and three of Saturday, not five of the day its middle falls in.
func TestBorrowedFactorOverHours(t *testing.T) {
	fri := time.Date(2026, 3, 6, 22, 0, 0, 0, time.UTC)
	sat := phase(fri.Add(3*time.Hour), day, 7)
	weekly := []float64{1, 1, 1, 1, 1, 1, 1}
	weekly[sat] = 0.5
	flat := make([]float64, 24)
	evening := make([]float64, 24)
	for h := range flat {
		flat[h], evening[h] = 1, 1
	}
	evening[22], evening[23] = 2, 2
	for _, c := range []struct {
		name  string
		b     borrowed
		start time.Time
		step  time.Duration
		want  float64
	}{
		{"flat day, across midnight", borrowed{mult: true, daily: flat, weekly: weekly}, fri, 5 * time.Hour, (2*1 + 3*0.5) / 5.0},
		{"busy evening, across midnight", borrowed{mult: true, daily: evening, weekly: weekly}, fri, 5 * time.Hour, (2*2 + 3*0.5) / 5.0},
		{"no daily profile", borrowed{mult: true, weekly: weekly}, fri, 5 * time.Hour, (2*1 + 3*0.5) / 5.0},
		{"on a log scale", borrowed{daily: make([]float64, 24), weekly: []float64{0, 0, 0, 0, 0, 0, 0}}, fri, 5 * time.Hour, 0},
		{"within Saturday", borrowed{mult: true, daily: flat, weekly: weekly}, fri.Add(5 * time.Hour), 5 * time.Hour, 0.5},
		{"an hour", borrowed{mult: true, daily: evening, weekly: weekly}, fri, time.Hour, 2},
	} {
		if got := c.b.at(c.start, c.step); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: factor %v, want %v", c.name, got, c.want)
		}
	}
}
