package forum

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/forecast"
)

// A fixed day: the demo's rate follows the clock it is given, never the
// hour the test runs at.
var planStart = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func TestDaily(t *testing.T) {
	for _, tc := range []struct {
		hour int
		want float64
	}{{3, 0.5}, {9, 1}, {15, 1.5}, {21, 1}} {
		if got := daily(planStart.Add(time.Duration(tc.hour-10) * time.Hour)); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("daily at %02d:00 = %g, want %g", tc.hour, got, tc.want)
		}
	}
}

// The plan is calm for demoWarmup, then breaks for incidentLength at a
// time, with at least incidentGap of calm between, both kinds coming up.
func TestDemoPlanSchedule(t *testing.T) {
	p := newDemoPlan(planStart, 7)
	kinds := map[incident]int{}
	var from time.Time // start of the incident under way
	var last = calm
	var lastEnd time.Time
	for at := planStart; at.Before(planStart.Add(24 * time.Hour)); at = at.Add(5 * time.Second) {
		rate, inc := p.at(at)
		if lo, hi := demoRate*0.5, demoRate*1.5; rate < lo-1e-9 || rate > hi+1e-9 {
			t.Fatalf("%v: rate %g outside %g..%g", at, rate, lo, hi)
		}
		if at.Before(planStart.Add(demoWarmup)) && inc != calm {
			t.Fatalf("%v: %v during the warm-up", at, inc)
		}
		switch {
		case inc != calm && last == calm:
			from = at
			if !lastEnd.IsZero() && at.Sub(lastEnd) < incidentGap {
				t.Errorf("%v: an incident %v after the last", at, at.Sub(lastEnd))
			}
			kinds[inc]++
		case inc == calm && last != calm:
			lastEnd = at
			if d := at.Sub(from); d != incidentLength {
				t.Errorf("%v: incident of %v, want %v", from, d, incidentLength)
			}
		}
		last = inc
	}
	if kinds[spike] == 0 || kinds[drop] == 0 || kinds[spike]+kinds[drop] > int(24*time.Hour/incidentGap) {
		t.Errorf("incidents in a day: %v", kinds)
	}
}

// simulate draws the demo's requests from planStart until the end of its
// first incident, of kind, and counts those of path ("" for all) per
// bucket of step.
func simulate(rng *rand.Rand, kind incident, path string, step time.Duration) []float64 {
	p := newDemoPlan(planStart, 1)
	p.kind = kind
	end := p.next.Add(incidentLength)
	counts := make([]float64, int(end.Sub(planStart)/step))
	for at := planStart; at.Before(end); at = at.Add(demoTick) {
		rate, inc := p.at(at)
		for _, r := range demoTickRequests(rng, rate, inc) {
			if path == "" || r.path == path || (path == "/posts/:id" && strings.HasPrefix(r.path, "/posts/")) {
				counts[int(at.Sub(planStart)/step)]++
			}
		}
	}
	return counts
}

// demoSeeds is how many draws of the demo's traffic each case is run on.
const demoSeeds = 20

// Within minutes of the demo's start the forecasts flag its first
// incident at the 5 s and 1 min precisions on every one of demoSeeds
// draws of its traffic, and flag the calm before it no more often than
// once per 1,000 buckets, the forecaster's own bound.
func TestDemoIncidentIsFlagged(t *testing.T) {
	for _, tc := range []struct {
		kind incident
		path string // "" for all the traffic
		want forecast.AnomalyKind
	}{
		{spike, "/posts/:id", forecast.Spike},
		{drop, "", forecast.Drop},
	} {
		for _, step := range []time.Duration{5 * time.Second, time.Minute} {
			t.Run(tc.kind.String()+"/"+step.String(), func(t *testing.T) {
				falseFlags, calm := 0, 0
				for seed := range uint64(demoSeeds) {
					flagged, early, n, err := demoFlags(seed, tc.kind, tc.path, step, tc.want)
					if err != nil {
						t.Fatal(err)
					}
					if !flagged {
						t.Errorf("seed %d: the %v is not flagged", seed, tc.kind)
					}
					falseFlags += early
					calm += n
				}
				if falseFlags > (calm+999)/1000 {
					t.Errorf("%d flags in %d calm buckets", falseFlags, calm)
				}
			})
		}
	}
}

// demoFlags fits one draw of the demo's traffic of path up to the end of
// its first incident: whether the incident is flagged, and the flags
// raised before it over how many calm buckets.
func demoFlags(seed uint64, kind incident, path string, step time.Duration, want forecast.AnomalyKind) (bool, int, int, error) {
	counts := simulate(rand.New(rand.NewPCG(seed, seed)), kind, path, step)
	if len(counts) > 120 { // what the precision keeps
		counts = counts[len(counts)-120:]
	}
	incidentAt := planStart.Add(demoWarmup)
	start := incidentAt.Add(incidentLength - time.Duration(len(counts))*step)
	fd, err := forecast.Fit(forecast.Series{Name: path, Step: step, Start: start, Values: counts})
	if err != nil {
		return false, 0, 0, err
	}
	flagged, early := false, 0
	for _, f := range fd.Flags {
		if f.Bucket.Before(incidentAt) {
			early++
		} else if f.Kind == want || f.Kind == forecast.LevelShift {
			flagged = true
		}
	}
	return flagged, early, len(counts) - int(incidentLength/step), nil
}
