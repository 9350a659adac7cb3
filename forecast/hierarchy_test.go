package forecast

import (
	"fmt"
	"math"
	"slices"
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

// A prepared Context fits as the plain one does, its shapes fitted once.
func TestContextPrepare(t *testing.T) {
	gc := genConfig{Step: time.Minute, N: 120, Base: 100, Daily: 0.8, Weekend: 0.3, Disp: 0.05}
	g := generate(gc, seeded(7, 0))
	cx := gc.context(Counts, genEnd, seeded(7, 1))
	plain, err := FitWithConfig(g.series(Counts), Config{Context: cx})
	if err != nil {
		t.Fatal(err)
	}
	prepared, err := FitWithConfig(g.series(Counts), Config{Context: cx.Prepare(Counts)})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := fmt.Sprint(plain.Model, plain.Forecast(6), plain.Incidents), fmt.Sprint(prepared.Model, prepared.Forecast(6), prepared.Incidents); a != b {
		t.Errorf("prepared %s\nplain %s", b, a)
	}
	if !slices.ContainsFunc(prepared.Model.Seasons, func(s Season) bool { return s.Source == "1h" }) {
		t.Errorf("seasons %+v: the 1 h profile not borrowed", prepared.Model.Seasons)
	}
}
