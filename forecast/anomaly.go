package forecast

import (
	"math"
	"time"
)

// AnomalyKind names what broke.
type AnomalyKind string

// The kinds of flag.
const (
	Spike             AnomalyKind = "spike"              // counts above their band, briefly
	Drop              AnomalyKind = "drop"               // counts below it, to zero included
	LevelShift        AnomalyKind = "level_shift"        // counts out of band, one side, for ShiftRun buckets
	LatencyRegression AnomalyKind = "latency_regression" // a latency quantile above its band
	ErrorSurge        AnomalyKind = "error_surge"        // more errors than the hits explain
)

// Direction is the side an incident broke to.
type Direction string

// The directions.
const (
	Up   Direction = "up"
	Down Direction = "down"
)

// Flag is one bucket of an incident.
type Flag struct {
	Series    string        `json:"series"`
	Precision time.Duration `json:"precision"`
	Bucket    time.Time     `json:"bucket"`
	Kind      AnomalyKind   `json:"kind"`
	Direction Direction     `json:"direction"`
	Observed  float64       `json:"observed"`
	Expected  float64       `json:"expected"`
	Band      Band          `json:"band"` // the 95 % one-step band
	Score     float64       `json:"score"`

	at int // index of the bucket in the history
}

// Incident is one event: the buckets from the first that broke out of
// band to the last, on one side. A break that lasts ShiftRun buckets is
// a level shift. An incident is Open while its newest buckets may still
// belong to it: until the series is back at the level it left from (for
// counts), or CloseAfter buckets in a row are back in band (for latency
// and error ratios, whose level it cannot judge).
type Incident struct {
	Series    string        `json:"series"`
	Precision time.Duration `json:"precision"`
	Kind      AnomalyKind   `json:"kind"`
	Direction Direction     `json:"direction"`
	Start     time.Time     `json:"start"` // the first bucket out of band
	End       time.Time     `json:"end"`   // the last bucket out of band so far
	Open      bool          `json:"open"`
	Buckets   int           `json:"buckets"` // out of band in it
	// Peak is the bucket furthest out, and its Score the incident's:
	// sorting incidents by |Score| puts the least likely first.
	Peak  Flag    `json:"peak"`
	Score float64 `json:"score"`
}

// span is an incident found in a history: its side and bucket indices.
type span struct {
	side        int
	first, last int // the first and last bucket out of band
	outs        int
	peak        int
	run, maxRun int // buckets out in a row on its side, now and at most
	quiet       int // buckets in a row not out on its side
	away        int // buckets not out on its side, nor back where it left from
	open        bool
}

// flaggedTo is the last bucket of a history of n the span flags.
func (sp span) flaggedTo(n int) int {
	if sp.open {
		return n - 1
	}
	return sp.last
}

func (sp *span) extend(t int, z []float64) {
	sp.last, sp.quiet = t, 0
	sp.outs++
	sp.run++
	sp.maxRun = max(sp.maxRun, sp.run)
	if math.Abs(z[t]) > math.Abs(z[sp.peak]) {
		sp.peak = t
	}
}

// kind is what the span's buckets make of a series of kind k.
func (sp span) kind(k Kind, shiftRun int) AnomalyKind {
	switch {
	case k == Latency:
		return LatencyRegression
	case k == ErrorRatio:
		return ErrorSurge
	case sp.maxRun >= shiftRun:
		return LevelShift
	case sp.side > 0:
		return Spike
	}
	return Drop
}

func direction(side int) Direction {
	if side < 0 {
		return Down
	}
	return Up
}

// incidents turns the spans found in the history into incidents and
// flags, and marks each bucket of an incident with its flag: from its
// first bucket to its last out of band, and on to the newest while it is
// open. The return to normal after it is not flagged.
func incidents(s Series, cfg Config, hist []Point, spans []span) ([]Incident, []Flag) {
	var out []Incident
	var flags []Flag
	for _, sp := range spans {
		kind, dir := sp.kind(cfg.Kind, cfg.ShiftRun), direction(sp.side)
		for t := sp.first; t <= sp.flaggedTo(len(hist)); t++ {
			pt := &hist[t]
			flags = append(flags, Flag{Series: s.Name, Precision: s.Step, Bucket: pt.Time, Kind: kind, Direction: dir,
				Observed: pt.Value, Expected: pt.Expected, Band: pt.Band95, Score: pt.Score, at: t})
		}
		pk := hist[sp.peak]
		out = append(out, Incident{Series: s.Name, Precision: s.Step, Kind: kind, Direction: dir,
			Start: hist[sp.first].Time, End: hist[sp.last].Time, Open: sp.open, Buckets: sp.outs,
			Peak: Flag{Series: s.Name, Precision: s.Step, Bucket: pk.Time, Kind: kind, Direction: dir,
				Observed: pk.Value, Expected: pk.Expected, Band: pk.Band95, Score: pk.Score, at: sp.peak},
			Score: pk.Score})
	}
	for i := range flags {
		hist[flags[i].at].Anomaly = &flags[i]
	}
	return out, flags
}
