package forecast

import (
	"math"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/race"
)

// apGoal is the least area under the precision–recall curve of the
// buckets ranked by |score|, at every precision, for each ranked kind.
const apGoal = 0.8

// apHeld holds the area where the corpus misses apGoal, a little under
// the figure measured, so that it gets no worse.
var apHeld = map[string]float64{
	"5s spike x3": 0.47, "5s drop to zero": 0.05, "1h0m0s spike x3": 0.67, "5h0m0s spike x3": 0.46, "24h0m0s spike x3": 0.75,
}

// minPositives is the least injected buckets a series must hold for its
// own area to be reported as its worst.
const minPositives = 9

// thresholds is the grid the streaming score's best threshold is read
// from.
func thresholds() []float64 {
	var out []float64
	for t := 1.5; t <= 15; t += 0.25 {
		out = append(out, t)
	}
	return out
}

// bestStream is a ranking's streaming score at its best threshold over
// every stretch of runs.
func bestStream(runs []rankRun, key func(rankedBucket) float64) (best, at float64) {
	best = math.Inf(-1)
	for _, th := range thresholds() {
		var s streamTally
		for _, r := range runs {
			for _, bs := range r.buckets {
				s.merge(streamScore(bs, func(b rankedBucket) bool { return key(b) >= th }))
			}
		}
		if v := s.scaled(); v > best {
			best, at = v, th
		}
	}
	return best, at
}

func flagStream(runs []rankRun) float64 {
	var s streamTally
	for _, r := range runs {
		for _, bs := range r.buckets {
			s.merge(streamScore(bs, func(b rankedBucket) bool { return b.onset }))
		}
	}
	return s.scaled()
}

func pooled(runs []rankRun) []rankedBucket {
	var all []rankedBucket
	for _, r := range runs {
		for _, bs := range r.buckets {
			all = append(all, bs...)
		}
	}
	return all
}

// On the real corpus with bursts of ×3 and drops to zero injected, every
// scored bucket ranked by |score|: the area under the precision–recall
// curve is at least apGoal at every precision (apHeld where the corpus
// misses it); Pulse's flags and its |score| ranking score higher on the
// streaming score than a sliding-window z-score at its best threshold;
// and the false incidents begun beside the injected ones are reported per
// precision with the worst series.
func TestRealCorpusRanking(t *testing.T) {
	race.SkipMeasurement(t)
	runs := replayRanked(t, Config{})
	byStep := map[time.Duration][]rankRun{}
	for _, r := range runs {
		byStep[r.step] = append(byStep[r.step], r)
	}
	for _, p := range sortedSteps(byStep) {
		for _, k := range rankedKinds {
			var sel []rankRun
			worst, worstName := math.Inf(1), ""
			for _, r := range byStep[p] {
				if r.inj != k {
					continue
				}
				sel = append(sel, r)
				if ap, n := averagePrecision(pooled([]rankRun{r}), absScore); n >= minPositives && ap < worst {
					worst, worstName = ap, r.series.name
				}
			}
			all := pooled(sel)
			ap, n := averagePrecision(all, absScore)
			apz, _ := averagePrecision(all, absZ)
			name := p.String() + " " + injections[k].name
			if worstName == "" {
				worstName, worst = "none of enough", math.NaN()
			}
			t.Logf("%-5v %-13s AUC-PR %.3f over %d injected buckets (worst series %s %.3f); z-score %.3f", p, injections[k].name, ap, n, worstName, worst, apz)
			if n < minPositives {
				continue
			}
			g := goal{apGoal, false}
			if h, ok := apHeld[name]; ok {
				g = goal{h, true}
			}
			g.check(t, name+" AUC-PR", ap, false)
		}
		on, bk, runs := 0, 0, 0
		worst, worstName := 0.0, ""
		for _, r := range byStep[p] {
			o, b := 0, 0
			for _, bs := range r.buckets {
				x, y := falseOnsets(bs)
				o, b = o+x, b+y
				runs += falseRuns(bs)
			}
			on, bk = on+o, bk+b
			if rate := 1000 * float64(o) / math.Max(1, float64(b)); rate > worst {
				worst, worstName = rate, r.series.name+" "+injections[r.inj].name
			}
		}
		t.Logf("%-5v false incidents begun beside the injected ones: %.2f per 1,000 of %d buckets (worst %s %.2f); flagged runs begun %.2f", p, 1000*float64(on)/math.Max(1, float64(bk)), bk, worstName, worst, 1000*float64(runs)/math.Max(1, float64(bk)))
	}
	flags := flagStream(runs)
	rank, rankAt := bestStream(runs, absScore)
	z, zAt := bestStream(runs, absZ)
	var z3 streamTally
	for _, r := range runs {
		for _, bs := range r.buckets {
			z3.merge(streamScore(bs, func(b rankedBucket) bool { return absZ(b) >= 3 }))
		}
	}
	t.Logf("streaming score: flags at the defaults %.1f; |score| at its best threshold %.1f (%.2f); sliding z-score at its best %.1f (%.2f), at 3 %.1f", flags, rank, rankAt, z, zAt, z3.scaled())
	for _, p := range sortedSteps(byStep) {
		f := flagStream(byStep[p])
		r, ra := bestStream(byStep[p], absScore)
		zz, za := bestStream(byStep[p], absZ)
		t.Logf("  %-5v flags %.1f; |score| %.1f (%.2f); z-score %.1f (%.2f)", p, f, r, ra, zz, za)
	}
	if rank <= z {
		t.Errorf("|score| ranking scores %.1f on the streaming score, the sliding z-score %.1f", rank, z)
	}
	if flags <= z {
		t.Errorf("flags at the defaults score %.1f on the streaming score, the sliding z-score at its best %.1f", flags, z)
	}
}
