package forecast

import (
	"math"
	"time"
)

// AnomalyKind names what broke.
type AnomalyKind string

// The kinds of flag.
const (
	Spike             AnomalyKind = "spike"              // counts above their band
	Drop              AnomalyKind = "drop"               // counts below it, to zero included
	LevelShift        AnomalyKind = "level_shift"        // counts out of band, one side, for ShiftRun buckets
	LatencyRegression AnomalyKind = "latency_regression" // a latency quantile above its band
	ErrorSurge        AnomalyKind = "error_surge"        // more errors than the hits explain
)

// Flag is one bucket that broke from its expectation.
type Flag struct {
	Series    string        `json:"series"`
	Precision time.Duration `json:"precision"`
	Bucket    time.Time     `json:"bucket"`
	Kind      AnomalyKind   `json:"kind"`
	Observed  float64       `json:"observed"`
	Expected  float64       `json:"expected"`
	Band      Band          `json:"band"` // the 95 % one-step band
	Score     float64       `json:"score"`

	at int // index of the bucket in the history
}

// flag walks the scored history and raises a flag on each bucket that
// completes K of the last N out of band on one side, or that alone is
// beyond Single. Latency and error ratios flag upward breaks only: a
// faster or cleaner bucket is no incident.
func flag(s Series, cfg Config, hist []Point, warm int) []Flag {
	var flags []Flag
	var at []int
	var recent []int // sides of the last N scored buckets: -1, 0, +1
	run, runSide := 0, 0
	for t := warm; t < len(hist); t++ {
		pt := &hist[t]
		z := pt.Score
		if math.IsNaN(z) {
			continue
		}
		side := 0
		if math.Abs(z) >= cfg.Band && (z > 0 || cfg.Kind == Counts) {
			side = sign(z)
		}
		recent = append(recent, side)
		if len(recent) > cfg.Persistence.N {
			recent = recent[1:]
		}
		if side != 0 && side == runSide {
			run++
		} else {
			run, runSide = btoi(side != 0), side
		}
		if side == 0 {
			continue
		}
		same := 0
		for _, r := range recent {
			if r == side {
				same++
			}
		}
		need := cfg.Persistence.K
		if cfg.off.persistence {
			need = 1
		}
		if same < need && math.Abs(z) < cfg.Single {
			continue
		}
		fl := Flag{Series: s.Name, Precision: s.Step, Bucket: pt.Time, Kind: kindOf(cfg.Kind, side, run >= cfg.ShiftRun),
			Observed: pt.Value, Expected: pt.Expected, Band: pt.Band95, Score: z, at: t}
		flags = append(flags, fl)
		at = append(at, t)
	}
	for i, t := range at {
		hist[t].Anomaly = &flags[i]
	}
	return flags
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func kindOf(k Kind, side int, shift bool) AnomalyKind {
	switch {
	case k == Latency:
		return LatencyRegression
	case k == ErrorRatio:
		return ErrorSurge
	case shift:
		return LevelShift
	case side > 0:
		return Spike
	}
	return Drop
}
