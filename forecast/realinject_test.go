package forecast

import (
	"math"
	"testing"
	"time"
)

// Incidents injected into the real series (semi-synthetic, as is
// standard): the series' own buckets from the injection on are changed
// as the kind says, and each fit from then on sees them.

// injection is one kind of incident.
type injection struct {
	name string
	side int                            // the direction a flag must take
	len  int                            // buckets; 0: to the end
	f    func(v float64, k int) float64 // the bucket k of the incident, from the series' own v
}

var injections = []injection{
	{"spike x3", 1, 3, func(v float64, _ int) float64 { return 3 * v }},
	{"drop to zero", -1, 3, func(float64, int) float64 { return 0 }},
	{"level -50%", -1, 6, func(v float64, _ int) float64 { return math.Round(0.5 * v) }},
	{"level shift +30%", 1, 0, func(v float64, _ int) float64 { return math.Round(1.3 * v) }},
	{"level shift -30%", -1, 0, func(v float64, _ int) float64 { return math.Round(0.7 * v) }},
}

// detectableSigmas is how far, in the fit's own one-step deviations, an
// incident must move its first three buckets on average to be counted,
// their mean lying beyond the 95 % band too: a smaller one is within the
// series' noise, where no forecaster can see it in three buckets.
const detectableSigmas = 3

// moved is the mean change inj makes to the first three buckets of an
// incident at bucket at, and their mean value then.
func moved(rs replaySet, at int, inj injection) (change, level float64) {
	k := 0.0
	for i := at; i < at+3 && i < len(rs.own.v) && (inj.len == 0 || i-at < inj.len); i++ {
		v := inj.f(rs.own.v[i], i-at)
		change += math.Abs(v - rs.own.v[i])
		level += v
		k++
	}
	return change / math.Max(1, k), level / math.Max(1, k)
}

// recallLead is how many buckets after an incident's start its flag may
// come.
const recallLead = 3

// injected edits a window: the buckets of the recording from at on (for
// inj.len of them) as inj says.
func injected(inj injection, at int) edit {
	return func(w []float64, first int) {
		for i := range w {
			k := first + i - at
			if k >= 0 && (inj.len == 0 || k < inj.len) {
				w[i] = inj.f(w[i], k)
			}
		}
	}
}

// recallTally counts the detectable incidents of a kind and those
// flagged in time.
type recallTally struct{ events, found int }

func (r *recallTally) merge(b recallTally) { r.events, r.found = r.events+b.events, r.found+b.found }
func (r recallTally) recall() float64      { return float64(r.found) / math.Max(1, float64(r.events)) }

// injectAt injects inj at bucket at of rs and reports whether it counts
// (detectable, and no incident already open before it) and whether a
// flag on its side came within recallLead buckets.
func injectAt(rs replaySet, at int, inj injection, cfg Config) (counts, found bool) {
	if !known(rs.own.v, at-1, at+3) {
		return false, false
	}
	before, err := onlineAt(rs, at-1, cfg, nil)
	if err != nil || before.flagged {
		return false, false
	}
	clean, err := onlineAt(rs, at, cfg, nil)
	if err != nil {
		return false, false
	}
	sigma := (clean.point.Band95.Hi - clean.point.Expected) / z95 // the deviation on its side
	if inj.side < 0 {
		sigma = (clean.point.Expected - clean.point.Band95.Lo) / z95
	}
	change, level := moved(rs, at, inj)
	b := clean.point.Band95
	if change < detectableSigmas*sigma || (inj.side > 0 && level <= b.Hi) || (inj.side < 0 && level >= b.Lo) {
		return false, false
	}
	for t := at; t <= at+recallLead && t < len(rs.own.v); t++ {
		o, err := onlineAt(rs, t, cfg, injected(inj, at))
		if err == nil && o.flagged && o.side == inj.side {
			return true, true
		}
	}
	return true, false
}

// known reports whether every bucket of v[from:to] the recording holds
// has a value: an incident is not injected over a day it left out.
func known(v []float64, from, to int) bool {
	for i := max(0, from); i < min(to, len(v)); i++ {
		if math.IsNaN(v[i]) {
			return false
		}
	}
	return true
}

// injectionPoints are where a series' incidents are injected at step:
// a few per stretch, apart from each other.
func injectionPoints(rs replaySet, s realSeries) []int {
	var out []int
	for _, st := range replayPlan(rs, s) {
		n := st.to - st.from
		for _, f := range []float64{0.3, 0.6, 0.9} {
			if at := st.from + int(f*float64(n)); at > st.from && at+recallLead < st.to {
				out = append(out, at)
			}
		}
	}
	return out
}

// recallRun is the recall of each injection at one precision.
type recallRun struct {
	step  time.Duration
	kinds []recallTally
}

// replayInjections injects every kind at every point of every series,
// and tallies recall per precision.
func replayInjections(tb testing.TB, cfg Config) map[time.Duration][]recallTally {
	var jobs []realRun
	for _, s := range realCorpus {
		for _, step := range s.steps {
			jobs = append(jobs, realRun{series: s, step: step})
		}
	}
	tallies := make([][]recallTally, len(jobs))
	parallel(len(jobs), func(j int) {
		r := jobs[j]
		rs := replaySetFor(tb, r.series.file, r.step)
		tallies[j] = make([]recallTally, len(injections))
		for _, at := range injectionPoints(rs, r.series) {
			for k, inj := range injections {
				counts, found := injectAt(rs, at, inj, cfg)
				if counts {
					tallies[j][k].events++
				}
				if found {
					tallies[j][k].found++
				}
			}
		}
	})
	out := map[time.Duration][]recallTally{}
	for j, r := range jobs {
		if out[r.step] == nil {
			out[r.step] = make([]recallTally, len(injections))
		}
		for k := range injections {
			out[r.step][k].merge(tallies[j][k])
		}
	}
	return out
}

// burstAfter is how many buckets after a burst's last its band is read.
const burstAfter = 10

// burstWidths injects a burst of three buckets at six times the series'
// own at bucket at, and returns the 95 % band's width burstAfter buckets
// after its last bucket, with and without the burst, and just before it.
func burstWidths(rs replaySet, at int, cfg Config) (with, without, before float64, ok bool) {
	end := at + 2 + burstAfter
	if end >= len(rs.own.v) || !known(rs.own.v, at-1, at+3) || !known(rs.own.v, end, end+1) {
		return 0, 0, 0, false
	}
	burst := injection{"burst x6", 1, 3, func(v float64, _ int) float64 { return 6 * v }}
	b, err1 := onlineAt(rs, end, cfg, injected(burst, at))
	c, err2 := onlineAt(rs, end, cfg, nil)
	p, err3 := onlineAt(rs, at-1, cfg, nil)
	if err1 != nil || err2 != nil || err3 != nil {
		return 0, 0, 0, false
	}
	w := func(o online) float64 { return o.point.Band95.Hi - o.point.Band95.Lo }
	return w(b), w(c), w(p), w(c) > 0 && w(p) > 0
}

// burstTally sums the ratios of the band's width after a burst to its
// width at the same bucket without it, and to its width before it.
type burstTally struct {
	n                int
	sumClean, sumPre float64
	worst            float64 // the largest ratio to the same bucket without it
}

func (b *burstTally) add(with, without, before float64) {
	r := with / without
	b.n++
	b.sumClean += r
	b.sumPre += with / before
	b.worst = math.Max(b.worst, r)
}

func (b *burstTally) merge(o burstTally) {
	b.n, b.sumClean, b.sumPre = b.n+o.n, b.sumClean+o.sumClean, b.sumPre+o.sumPre
	b.worst = math.Max(b.worst, o.worst)
}

// replayBursts measures the band after a burst at every injection point
// of every series, per precision.
func replayBursts(tb testing.TB, cfg Config) map[time.Duration]burstTally {
	var jobs []realRun
	for _, s := range realCorpus {
		for _, step := range s.steps {
			jobs = append(jobs, realRun{series: s, step: step})
		}
	}
	tallies := make([]burstTally, len(jobs))
	parallel(len(jobs), func(j int) {
		rs := replaySetFor(tb, jobs[j].series.file, jobs[j].step)
		for _, at := range injectionPoints(rs, jobs[j].series) {
			if with, without, before, ok := burstWidths(rs, at, cfg); ok {
				tallies[j].add(with, without, before)
			}
		}
	})
	out := map[time.Duration]burstTally{}
	for j, r := range jobs {
		t := out[r.step]
		t.merge(tallies[j])
		out[r.step] = t
	}
	return out
}
