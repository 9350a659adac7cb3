package forecast

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/race"
)

// breakFactors are the multiples of its expectation a bucket is set to
// (rounded to whole counts),
// in order: a bigger break up or down at the same bucket must score
// further out.
var breakFactors = []float64{0, 0.25, 0.5, 1, 2, 3, 5, 8}

// setBucket sets bucket at of the recording to v in a window.
func setBucket(at int, v float64) edit {
	return func(w []float64, first int) {
		if k := at - first; k >= 0 && k < len(w) {
			w[k] = v
		}
	}
}

// breakTally is what the breaks at one precision scored.
type breakTally struct {
	points, unordered int     // points tried, and those whose scores did not grow with the break
	narrow, above     int     // points with the 95 % band's upper edge below 3× the expectation, and those where 5× scored beyond the band threshold
	aboveSingle       int     // of those, beyond Config.Single
	lowest            float64 // the least score of 5×
	lowestAt          string
	firstUnordered    string
}

// unorderedHeld holds the points whose scores did not grow with every
// bigger break where the corpus misses none, at the figure measured.
var unorderedHeld = map[time.Duration]int{5 * time.Second: 1, time.Minute: 1, time.Hour: 4, 5 * time.Hour: 3, day: 2}

// fiveMissHeld holds the points where 5× its expectation scored inside
// the band, where the corpus misses none, at the figure measured.
var fiveMissHeld = map[time.Duration]int{time.Hour: 2, 5 * time.Hour: 2, day: 1}

// On every series and precision of the real corpus, at each injection
// point: a bucket set to a bigger multiple of its expectation scores
// higher (0 to 8 times; unorderedHeld where the corpus misses it), and
// where at least one hit is expected and the 95 % band's upper edge is
// below 3× the expectation, a bucket at 5× it scores beyond the band an
// incident begins outside (DefaultBandFor; fiveMissHeld where the corpus
// misses it).
func TestRealCorpusBreaksRank(t *testing.T) {
	race.SkipMeasurement(t)
	var jobs []realRun
	for _, s := range realCorpus {
		for _, step := range s.steps {
			jobs = append(jobs, realRun{series: s, step: step})
		}
	}
	tallies := make([]breakTally, len(jobs))
	parallel(len(jobs), func(j int) {
		r, tl := jobs[j], &tallies[j]
		tl.lowest = math.Inf(1)
		rs := replaySetFor(t, r.series.file, r.step)
		for _, at := range injectionPoints(rs, r.series) {
			clean, err := onlineAt(rs, at, Config{}, nil)
			e := clean.point.Expected
			if err != nil || !known(rs.own.v, at, at+1) || !(e > 0) {
				continue
			}
			tl.points++
			prev, prevV := math.Inf(-1), -1.0
			ordered := true
			for _, k := range breakFactors {
				v := math.Round(k * e) // counts are whole
				if v == prevV {
					continue
				}
				o, err := onlineAt(rs, at, Config{}, setBucket(at, v))
				if err != nil || !(o.point.Score > prev) {
					ordered = false
					break
				}
				prev, prevV = o.point.Score, v
			}
			if !ordered {
				tl.unordered++
				if tl.firstUnordered == "" {
					tl.firstUnordered = fmt.Sprintf("%v at %v, expected %.2f", r.series, rs.own.time(at).Format(time.DateTime), e)
				}
			}
			if e < 1 || clean.point.Band95.Hi >= 3*e {
				continue // under a hit expected, 5× is no whole count's break
			}
			tl.narrow++
			o, err := onlineAt(rs, at, Config{}, setBucket(at, math.Round(5*e)))
			if err != nil {
				continue
			}
			if o.point.Score > DefaultBandFor(r.step) {
				tl.above++
			}
			if o.point.Score > DefaultSingle {
				tl.aboveSingle++
			}
			if o.point.Score < tl.lowest {
				tl.lowest, tl.lowestAt = o.point.Score, fmt.Sprintf("%v at %v", r.series, rs.own.time(at).Format(time.DateTime))
			}
		}
	})
	byStep := map[time.Duration]breakTally{}
	for j, r := range jobs {
		a, b := byStep[r.step], tallies[j]
		if a.firstUnordered == "" {
			a.firstUnordered = b.firstUnordered
		}
		if a.points == 0 || b.lowest < a.lowest {
			a.lowest, a.lowestAt = b.lowest, b.lowestAt
		}
		a.points, a.unordered, a.narrow, a.above, a.aboveSingle = a.points+b.points, a.unordered+b.unordered, a.narrow+b.narrow, a.above+b.above, a.aboveSingle+b.aboveSingle
		byStep[r.step] = a
	}
	for _, p := range sortedSteps(byStep) {
		b := byStep[p]
		t.Logf("%-5v %3d points, %d with scores out of order; 5× where the band is under 3×: %d of %d beyond %.2f, %d beyond %.0f, least %.2f (%s)",
			p, b.points, b.unordered, b.above, b.narrow, DefaultBandFor(p), b.aboveSingle, DefaultSingle, b.lowest, b.lowestAt)
		if b.unordered > unorderedHeld[p] {
			t.Errorf("%v: %d points whose scores do not grow with the break (one: %s), bound %d", p, b.unordered, b.firstUnordered, unorderedHeld[p])
		} else if b.unordered > 0 {
			t.Logf("   out of order: %s", b.firstUnordered)
		}
		if b.narrow-b.above > fiveMissHeld[p] {
			t.Errorf("%v: 5× its expectation scored beyond the band at %d of %d points (least %.2f, %s)", p, b.above, b.narrow, b.lowest, b.lowestAt)
		}
	}
}
