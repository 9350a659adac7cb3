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

// simulate draws the demo's requests from planStart until tail after the
// end of its first incident, of kind, and counts those of path ("" for
// all) per bucket of step.
func simulate(rng *rand.Rand, kind incident, path string, step, tail time.Duration) []float64 {
	p := newDemoPlan(planStart, 1)
	p.kind = kind
	end := p.next.Add(incidentLength + tail)
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
	counts := simulate(rand.New(rand.NewPCG(seed, seed)), kind, path, step, 0)
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

// recovery is how long after an incident its return to normal is watched.
const recovery = 3 * time.Minute

// Scanned online as the dashboard and the anomaly rule scan it (a fit at
// each bucket of its last 120), each of the demo's incidents begins one
// incident, flagged within three buckets of its start on its side, at 5 s
// and at 1 min; the traffic's return to normal after it begins none.
func TestDemoIncidentFlaggedOnce(t *testing.T) {
	for _, tc := range []struct {
		kind incident
		path string
		dir  forecast.Direction
	}{{spike, "/posts/:id", forecast.Up}, {drop, "", forecast.Down}} {
		for _, step := range []time.Duration{5 * time.Second, time.Minute} {
			t.Run(tc.kind.String()+"/"+step.String(), func(t *testing.T) {
				for seed := range uint64(demoSeeds) {
					onsets, err := demoOnsets(seed, tc.kind, tc.path, step)
					if err != nil {
						t.Fatal(err)
					}
					if len(onsets.at) != 1 || onsets.at[0] > 3 || onsets.dir[0] != tc.dir {
						t.Errorf("seed %d: incidents begun at buckets %v from the %v's start, %v, want one within 3, %v", seed, onsets.at, tc.kind, onsets.dir, tc.dir)
					}
				}
			})
		}
	}
}

type demoOnset struct {
	at  []int // buckets from the incident's start
	dir []forecast.Direction
}

// demoOnsets fits one draw of the demo's traffic of path at each bucket
// from just before its first incident to recovery after it, and lists
// where flagged runs begin on the newest bucket.
func demoOnsets(seed uint64, kind incident, path string, step time.Duration) (demoOnset, error) {
	counts := simulate(rand.New(rand.NewPCG(seed, seed)), kind, path, step, recovery)
	first := int(demoWarmup / step) // the incident's first bucket
	var out demoOnset
	prev := false
	for i := first - 3; i < len(counts); i++ {
		lo := max(0, i+1-120)
		fd, err := forecast.Fit(forecast.Series{Name: path, Step: step, Start: planStart.Add(time.Duration(lo) * step), Values: counts[lo : i+1]})
		if err != nil {
			return out, err
		}
		last := fd.History[len(fd.History)-1].Anomaly
		if last != nil && !prev {
			out.at, out.dir = append(out.at, i-first), append(out.dir, last.Direction)
		}
		prev = last != nil
	}
	return out, nil
}
