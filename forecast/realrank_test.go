package forecast

import (
	"math"
	"testing"
	"time"
)

// The real corpus with incidents injected, every bucket of each stretch
// scored online as a scan sees it: the material of the ranking (area
// under the precision–recall curve), the streaming score and the false
// incidents begun beside injected ones.

// rankedBucket is one bucket of a stretch, as the fit of its own bucket
// scored it.
type rankedBucket struct {
	score   float64 // the fit's; NaN when none
	z       float64 // a sliding-window z-score of the same buckets
	onset   bool    // an incident begins here
	run     bool    // a flagged run begins here: an incident, or one re-opened
	label   int     // 1: injected, 0: not, -1: left out (an outage, an injection too small to see)
	inEvent bool    // within an injected incident's window
}

// eventWindow is how many buckets after an injected incident's start a
// detection counts as finding it, before its own buckets end: a tenth
// of the stretch shared by its incidents, as the streaming score's
// windows are, and at least the incident.
func eventWindow(stretchLen, events, length int) int {
	return max(length, int(math.Ceil(0.1*float64(stretchLen)/float64(max(events, 1)))))
}

// zWindow is the window of the sliding z-score baseline: as many buckets
// as Pulse keeps.
const zWindow = replayWindow

// slidingZ is the plain baseline: the bucket's distance from the mean of
// the zWindow buckets before it, in their standard deviations.
func slidingZ(w []float64) float64 {
	n := len(w) - 1
	sum, sq, k := 0.0, 0.0, 0.0
	for _, v := range w[max(0, n-zWindow):n] {
		if !math.IsNaN(v) {
			sum += v
			sq += v * v
			k++
		}
	}
	if k < 2 || math.IsNaN(w[n]) {
		return math.NaN()
	}
	mean := sum / k
	sd := math.Sqrt(math.Max(sq/k-mean*mean, 0))
	return (w[n] - mean) / math.Max(sd, 1e-9)
}

// rankStretch injects inj at each of the points of st that a fit could
// see (as TestRealCorpusRecall counts them), replays st online with all
// of them, and returns its buckets.
func rankStretch(rs replaySet, st stretch, inj injection, cfg Config) []rankedBucket {
	n := st.to - st.from
	var points []int
	for _, f := range []float64{0.3, 0.6, 0.9} {
		at := st.from + int(f*float64(n))
		if at > st.from && at+recallLead < st.to && detectable(rs, at, inj, cfg) {
			points = append(points, at)
		}
	}
	out := make([]rankedBucket, n)
	length := inj.len
	win := eventWindow(n, 3, length)
	for i := range out {
		out[i].score, out[i].z = math.NaN(), math.NaN()
	}
	for _, f := range []float64{0.3, 0.6, 0.9} { // left out unless detectable
		at := st.from + int(f*float64(n))
		for k := at; k < at+length && k < st.to; k++ {
			out[k-st.from].label = -1
		}
	}
	for _, at := range points {
		for k := at; k < at+win && k < st.to; k++ {
			out[k-st.from].inEvent = true
			if k < at+length {
				out[k-st.from].label = 1
			}
		}
	}
	ed := func(w []float64, first int) {
		for _, at := range points {
			injected(inj, at)(w, first)
		}
	}
	prev := false
	seen := newFlagLog(rs.own)
	for i := st.from - 1; i < st.to; i++ {
		o, err := onlineAt(rs, i, cfg, ed)
		flagged := err == nil && o.flagged
		if i >= st.from {
			b := &out[i-st.from]
			if err == nil {
				b.score = o.point.Score
				w := append([]float64(nil), rs.own.v[max(0, i-zWindow):i+1]...)
				ed(w, max(0, i-zWindow))
				b.z = slidingZ(w)
			}
			b.run = flagged && !prev
			b.onset = b.run && seen.begins(i, o)
			if math.IsNaN(rs.own.v[i]) || duringOutage(rs.outages, rs.own.start+int64(i)*rs.own.step, rs.own.step) {
				b.label = -1
			}
		}
		if err == nil {
			seen.note(i, o)
		}
		prev = flagged
	}
	return out
}

// detectable reports whether inj at bucket at moves its first buckets
// far enough to be seen (as injectAt counts it), with no incident open
// before it.
func detectable(rs replaySet, at int, inj injection, cfg Config) bool {
	if !known(rs.own.v, at-1, at+3) {
		return false
	}
	clean, err := onlineAt(rs, at, cfg, nil)
	if err != nil {
		return false
	}
	b := clean.point.Band95
	sigma := (b.Hi - clean.point.Expected) / z95
	if inj.side < 0 {
		sigma = (clean.point.Expected - b.Lo) / z95
	}
	change, level := moved(rs, at, inj)
	return change >= detectableSigmas*sigma && ((inj.side > 0 && level > b.Hi) || (inj.side < 0 && level < b.Lo))
}

// rankRun is one series at one precision with one kind injected.
type rankRun struct {
	series  realSeries
	step    time.Duration
	inj     int
	buckets [][]rankedBucket // per stretch
}

// rankedKinds are the injections ranked: bursts of ×3 and drops to zero.
var rankedKinds = []int{0, 1}

// replayRanked replays every series at every precision with each ranked
// kind injected.
func replayRanked(tb testing.TB, cfg Config) []rankRun {
	var jobs []rankRun
	for _, s := range realCorpus {
		for _, step := range s.steps {
			for _, k := range rankedKinds {
				jobs = append(jobs, rankRun{series: s, step: step, inj: k})
			}
		}
	}
	parallel(len(jobs), func(j int) {
		r := &jobs[j]
		rs := replaySetFor(tb, r.series.file, r.step)
		for _, st := range replayPlan(rs, r.series) {
			r.buckets = append(r.buckets, rankStretch(rs, st, injections[r.inj], cfg))
		}
	})
	return jobs
}
