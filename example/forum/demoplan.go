package forum

import (
	"math"
	"math/rand/v2"
	"time"
)

// The demo traffic's shape: a daily swing, so the 1 h series has a season
// to learn, and now and then an incident, so the dashboard has a break to
// flag within minutes of starting the demo at the 5 s and 1 min
// precisions.

// incident is what goes wrong for a few minutes.
type incident int

const (
	calm  incident = iota
	spike          // a burst of post views, several times their share
	drop           // the traffic falls to a trickle
)

func (i incident) String() string {
	return [...]string{"calm", "spike", "drop"}[i]
}

const (
	demoRate = 5.0 // requests a second at the daily mean
	// demoWarmup is the calm before the first incident: long enough for
	// the 1 min series to have the history whose noise a flag is judged
	// against (TestDemoIncidentIsFlagged).
	demoWarmup = 12 * time.Minute
	// incidentLength spans three 1 min buckets, two of which are enough
	// to raise a flag.
	incidentLength = 3 * time.Minute
	// incidentGap is the least calm between incidents; a random part as
	// long again is added.
	incidentGap = 12 * time.Minute
	spikeFactor = 6.0  // a spike's post views, times their usual share
	dropShare   = 0.05 // what a drop leaves of the traffic
)

// demoPlan says how busy the demo is at any time and which incident, if
// any, is under way.
type demoPlan struct {
	start time.Time
	rng   *rand.Rand
	next  time.Time // start of the next incident
	kind  incident  // its kind
}

func newDemoPlan(start time.Time, seed uint64) *demoPlan {
	p := &demoPlan{start: start, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	p.next = start.Add(demoWarmup)
	p.kind = spike
	return p
}

// daily is the day's swing around 1: lowest at 03:00, highest at 15:00
// in t's own zone, between 0.5 and 1.5.
func daily(t time.Time) float64 {
	h := float64(t.Hour()) + float64(t.Minute())/60
	return 1 + 0.5*math.Sin(2*math.Pi*(h-9)/24)
}

// at is the rate (requests a second) and the incident at t; t only moves
// forward between calls.
func (p *demoPlan) at(t time.Time) (float64, incident) {
	for !t.Before(p.next.Add(incidentLength)) {
		gap := incidentGap + time.Duration(p.rng.Int64N(int64(incidentGap)))
		p.next = p.next.Add(incidentLength + gap)
		p.kind = incident(1 + p.rng.IntN(2))
	}
	rate := demoRate * daily(t)
	if t.Before(p.next) {
		return rate, calm
	}
	return rate, p.kind
}
