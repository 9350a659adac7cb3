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
// beyond Single, or (counts) that ends a run of runLen whose scores sum
// beyond RunSum. Latency and error ratios flag upward breaks only: a
// faster or cleaner bucket is no incident.
func flag(s Series, cfg Config, hist []Point, warm int) []Flag {
	var flags []Flag
	var at []int
	recent := make([]int, 0, cfg.Persistence.N) // sides of the last N scored buckets: -1, 0, +1
	run, runSide := 0, 0
	// since is where the window of the next flag starts: a flagged run
	// ends at the first bucket not out on its side, and the buckets
	// before that no longer count toward a new flag, or one noisy bucket
	// after a spike would complete its K of N with the spike's.
	since, last := warm, 0 // last: the side of the previous bucket if it flagged
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
		if last != 0 && side != last && !cfg.off.window {
			since, recent = t+1, recent[:0]
		}
		sum := cfg.RunSum > 0 && !cfg.off.runSum && cfg.Kind == Counts && runSum(hist, t, since, cfg.RunSum)
		if sum && side == 0 {
			side = sign(z)
		}
		if len(recent) == cfg.Persistence.N { // slide in place: no new array a bucket
			recent = recent[:copy(recent, recent[1:])]
		}
		recent = append(recent, side)
		if side != 0 && side == runSide {
			run++
		} else {
			run, runSide = btoi(side != 0), side
		}
		last = 0
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
		if same < need && math.Abs(z) < cfg.Single && !sum {
			continue
		}
		fl := Flag{Series: s.Name, Precision: s.Step, Bucket: pt.Time, Kind: kindOf(cfg.Kind, side, run >= cfg.ShiftRun),
			Observed: pt.Value, Expected: pt.Expected, Band: pt.Band95, Score: z, at: t}
		flags = append(flags, fl)
		at = append(at, t)
		last = side
	}
	for i, t := range at {
		hist[t].Anomaly = &flags[i]
	}
	return flags
}

// runFloor is the score a bucket needs of its own to complete a run
// whose sum flags it: a run ends out of band, not on an ordinary bucket.
const runFloor = 2.0

// runSum reports whether bucket t ends a run of runLen scored buckets
// whose scores sum to at least limit on the side of t's. A spike of a
// few buckets or the start of a shift each move the score a little less
// than a band can catch alone, where the expectation is less sure; their
// sum shows them.
func runSum(hist []Point, t, warm int, limit float64) bool {
	z := hist[t].Score
	if math.Abs(z) < runFloor {
		return false
	}
	sum, m := 0.0, 0
	for u := t; u >= warm && m < runLen; u-- {
		if !math.IsNaN(hist[u].Score) {
			sum += hist[u].Score
			m++
		}
	}
	return m == runLen && math.Abs(sum) >= limit && sign(sum) == sign(z)
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
