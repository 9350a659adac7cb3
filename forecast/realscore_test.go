package forecast

import (
	"math"
	"sort"
)

// averagePrecision is the area under the precision–recall curve of
// ranking the buckets by key, largest first (NaN last), with label 1 the
// positives and label -1 left out: the mean, over the positives, of the
// precision at each one's rank. Tied keys are taken as one step.
func averagePrecision(bs []rankedBucket, key func(rankedBucket) float64) (ap float64, positives int) {
	type kv struct {
		k   float64
		pos bool
	}
	var xs []kv
	for _, b := range bs {
		if b.label < 0 {
			continue
		}
		k := key(b)
		if math.IsNaN(k) {
			k = math.Inf(-1)
		}
		xs = append(xs, kv{k, b.label == 1})
		if b.label == 1 {
			positives++
		}
	}
	if positives == 0 {
		return math.NaN(), 0
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i].k > xs[j].k })
	tp, sum := 0, 0.0
	for i := 0; i < len(xs); {
		j, p := i, 0
		for ; j < len(xs) && xs[j].k == xs[i].k; j++ {
			if xs[j].pos {
				p++
			}
		}
		tp += p
		sum += float64(p) * float64(tp) / float64(j)
		i = j
	}
	return sum / float64(positives), positives
}

func absScore(b rankedBucket) float64 { return math.Abs(b.score) }
func absZ(b rankedBucket) float64     { return math.Abs(b.z) }

// The streaming score's standard weights: a true detection at the start
// of its window earns about 1, a missed window costs 1, a false
// detection far from any window costs 0.11.
const (
	streamTP = 1.0
	streamFP = 0.11
	streamFN = 1.0
)

// streamSigmoid is the scaled sigmoid of the streaming score: from about
// 1 at y = -1 (the start of a window) to 0 at its end, and toward -1 for
// detections further and further after it.
func streamSigmoid(y float64) float64 { return 2/(1+math.Exp(5*y)) - 1 }

// streamTally is a detector's raw streaming score over many stretches,
// with the scores of flagging nothing and of flagging every window at
// its start.
type streamTally struct{ raw, null, perfect float64 }

func (s *streamTally) merge(o streamTally) {
	s.raw, s.null, s.perfect = s.raw+o.raw, s.null+o.null, s.perfect+o.perfect
}

// scaled is 0 for flagging nothing and 100 for flagging every window at
// its start with no false detection.
func (s streamTally) scaled() float64 {
	return 100 * (s.raw - s.null) / (s.perfect - s.null)
}

// streamScore scores the detections of one stretch (detect reports
// whether a bucket is one) against its injected incidents' windows
// (rankedBucket.inEvent, from each start). Buckets left out (outages,
// injections too small to see) are neither.
func streamScore(bs []rankedBucket, detect func(rankedBucket) bool) streamTally {
	var s streamTally
	lastEnd, lastLen := -1, 1
	for i := 0; i < len(bs); {
		if bs[i].inEvent && bs[i].label == 1 {
			j := i
			for j < len(bs) && bs[j].inEvent {
				j++
			}
			n := j - i
			s.null -= streamFN
			s.perfect += streamTP * streamSigmoid(-1)
			found := false
			for k := i; k < j && !found; k++ {
				if detect(bs[k]) {
					// -1 at the window's first bucket, 0 past its last.
					s.raw += streamTP * streamSigmoid(-float64(j-k)/float64(n))
					found = true
				}
			}
			if !found {
				s.raw -= streamFN
			}
			lastEnd, lastLen, i = j, n, j
			continue
		}
		if bs[i].label >= 0 && !bs[i].inEvent && detect(bs[i]) {
			if lastEnd < 0 {
				s.raw -= streamFP
			} else {
				s.raw += streamFP * streamSigmoid(float64(i-lastEnd+1)/float64(lastLen))
			}
		}
		i++
	}
	return s
}

// falseOnsets counts the incidents begun outside the injected incidents'
// windows and the recording's outages, over the buckets that could begin
// one.
func falseOnsets(bs []rankedBucket) (onsets, buckets int) {
	for _, b := range bs {
		if b.label < 0 || b.inEvent {
			continue
		}
		buckets++
		if b.onset {
			onsets++
		}
	}
	return onsets, buckets
}

// falseRuns is falseOnsets counting every flagged run begun, an incident
// re-opened included.
func falseRuns(bs []rankedBucket) int {
	n := 0
	for _, b := range bs {
		if b.label >= 0 && !b.inEvent && b.run {
			n++
		}
	}
	return n
}
