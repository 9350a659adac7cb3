package forecast

import (
	"math"
	"runtime"
	"sync"
	"testing"
	"time"
)

// The online replay of a recorded series, as Pulse holds it and as a scan
// fits it: at each bucket, its last 120 buckets, and below 1 h and 1 d the
// same series summed into the complete 1 h and 1 d buckets before the
// bucket's end, as the Context.

// replayWindow is the number of buckets a fit sees, as Pulse keeps.
const replayWindow = 120

// replaySet is a recording at one step with its 1 h and 1 d sums.
type replaySet struct {
	own, hour, day recording
	outages        []outage
	weeks          weekLog // below a day
}

var replaySets sync.Map

func replaySetFor(tb testing.TB, file string, step time.Duration) replaySet {
	key := file + "@" + step.String()
	if v, ok := replaySets.Load(key); ok {
		return v.(replaySet)
	}
	base := loadRecording(tb, file)
	rs := replaySet{own: base.at(int64(step / time.Second)), outages: outagesOf(tb, file)}
	if step < time.Hour {
		rs.hour = base.at(3600)
	}
	if step < day {
		rs.day = base.at(86400)
		rs.weeks = weekLogFor(tb, file)
	}
	replaySets.Store(key, rs)
	return rs
}

// last returns the complete buckets of r ending by unix second end, at
// most n of them, as a Series; nil if r is empty.
func (r recording) last(end int64, n int) *Series {
	if r.step == 0 {
		return nil
	}
	hi := min(int((end-r.start)/r.step), len(r.v))
	lo := max(0, hi-n)
	if hi <= lo {
		return nil
	}
	return &Series{Name: r.name, Step: time.Duration(r.step) * time.Second, Start: r.time(lo), Values: r.v[lo:hi]}
}

// edit changes the values of a window in place; first is the index in
// the recording of the window's first bucket.
type edit func(w []float64, first int)

// fitAt fits the window of buckets ending with bucket i of the set's own
// recording, edited by ed when not nil.
func (rs replaySet) fitAt(i int, cfg Config, ed edit) (*Fitted, error) {
	own := rs.own
	lo := i + 1 - replayWindow
	w := own.v[lo : i+1]
	if ed != nil {
		w = append([]float64(nil), w...)
		ed(w, lo)
	}
	end := own.start + int64(i+1)*own.step
	cfg.Context = Context{Hourly: rs.hour.last(end, replayWindow), Daily: rs.day.last(end, replayWindow), Week: rs.weeks.at(end)}
	s := Series{Name: own.name, Step: time.Duration(own.step) * time.Second, Start: own.time(lo), Values: w}
	return FitWithConfig(s, cfg)
}

// stretch is a run of consecutive buckets scored online.
type stretch struct{ from, to int } // [from, to) in the own recording

// replayPlan picks the stretches of s scored at step: at most maxScored
// buckets in stretches of at most stretchLen, spread evenly over the
// series' span, each bucket with a full window before it.
func replayPlan(rs replaySet, s realSeries) []stretch {
	const maxScored, stretchLen = 600, 150
	from := max(rs.own.index(s.from.Unix()), replayWindow)
	to := min(rs.own.index(s.to.Unix()), len(rs.own.v))
	n := to - from
	if n <= 0 {
		return nil
	}
	if n <= maxScored {
		return []stretch{{from, to}}
	}
	k := maxScored / stretchLen
	var out []stretch
	for j := range k {
		a := from + j*(n-stretchLen)/(k-1)
		out = append(out, stretch{a, a + stretchLen})
	}
	return out
}

// online is what the fit at one bucket says of that bucket, the newest it
// saw.
type online struct {
	value     float64
	point     Point
	flagged   bool
	side      int       // of the flag
	start     time.Time // the first bucket of the incident flagged
	fd        *Fitted
	lastIndex int
}

func onlineAt(rs replaySet, i int, cfg Config, ed edit) (online, error) {
	fd, err := rs.fitAt(i, cfg, ed)
	if err != nil {
		return online{}, err
	}
	n := len(fd.History) - 1
	p := fd.History[n]
	o := online{value: p.Value, point: p, fd: fd, lastIndex: n}
	if p.Anomaly != nil {
		o.flagged = true
		o.side = 1
		if p.Anomaly.Observed < p.Anomaly.Expected {
			o.side = -1
		}
		o.start = p.Time
		for _, in := range fd.Incidents {
			if !in.Start.After(p.Time) && (in.Open || !in.End.Before(p.Time)) {
				o.start = in.Start
			}
		}
	}
	return o, nil
}

// flagLog remembers the side each bucket of a stretch was flagged on
// online, to tell an incident begun from one seen before.
type flagLog struct {
	rec  recording
	side map[int]int
}

func newFlagLog(rec recording) flagLog { return flagLog{rec: rec, side: map[int]int{}} }

// note records what the fit of bucket i said of it.
func (l flagLog) note(i int, o online) {
	if o.flagged {
		l.side[i] = o.side
	}
}

// begins reports whether the flag of bucket i begins an incident: o
// flags it, and its incident is not one already flagged whose flag
// lapsed within its recovery. Each fit judges its window afresh: near
// the level an incident left from, one fit ends it and the next does not
// yet, or a bucket breaks out again on its side. The incident is then
// the one already begun (its start the same), as the detector takes a
// break to its side within the recovery and as the Scanner keeps it
// (fromstore: one record, the first start). It is when the last bucket
// of o's incident before i flagged on its side by the fit of its own
// lies within the recovery: the lapse since no longer than the incident
// had lasted from its start, or than CloseAfter buckets, whichever is more.
func (l flagLog) begins(i int, o online) bool {
	if !o.flagged {
		return false
	}
	first := max(0, l.rec.index(o.start.Unix()))
	for u := i - 1; u >= first; u-- {
		if l.side[u] != o.side {
			continue
		}
		lapse, lasted := i-u-1, u-first+1
		return lapse > max(DefaultCloseAfter, lasted)
	}
	return true
}

// parallel runs f(i) for i in [0, n) on every core.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// realStats tallies one series at one precision.
type realStats struct {
	n, in80, in95 int // scored buckets, and those inside each band
	calm, onsets  int // buckets that could begin an incident, and the incidents begun
	outages       int // incidents begun at an outage the recording shows
	runs, runsOut int // flagged runs started (an incident re-opened starts one), and those at outages
	width         float64
	days          [7]dayStats // by the weekday (UTC) of the bucket
}

// dayStats tallies the buckets of one weekday and the false runs begun.
type dayStats struct{ calm, false int }

func (a *realStats) merge(b realStats) {
	a.n, a.in80, a.in95 = a.n+b.n, a.in80+b.in80, a.in95+b.in95
	a.calm, a.onsets, a.outages = a.calm+b.calm, a.onsets+b.onsets, a.outages+b.outages
	a.runs, a.runsOut = a.runs+b.runs, a.runsOut+b.runsOut
	for d := range a.days {
		a.days[d].calm += b.days[d].calm
		a.days[d].false += b.days[d].false
	}
}

func (a realStats) cov80() float64 { return float64(a.in80) / float64(a.n) }
func (a realStats) cov95() float64 { return float64(a.in95) / float64(a.n) }
func (a realStats) onsetsPer1000() float64 {
	return 1000 * float64(a.onsets) / math.Max(1, float64(a.calm))
}

// falseRunsPer1000 is the flagged runs started per 1,000 buckets but those
// at the recording's outages, re-opened incidents included.
func (a realStats) falseRunsPer1000() float64 {
	return 1000 * float64(a.runs-a.runsOut) / math.Max(1, float64(a.calm))
}

// falsePer1000 is the incidents begun per 1,000 buckets but those at the
// recording's outages: real incidents, whose flags are not false.
func (a realStats) falsePer1000() float64 {
	return 1000 * float64(a.onsets-a.outages) / math.Max(1, float64(a.calm))
}

// replayStretch scores every bucket of st online, and counts the flagged
// runs started in it (the bucket before it tells whether the first one
// continues a run) and the incidents begun.
func replayStretch(tb testing.TB, rs replaySet, st stretch, cfg Config) realStats {
	var out realStats
	prev := false
	seen := newFlagLog(rs.own)
	for i := st.from - 1; i < st.to; i++ {
		o, err := onlineAt(rs, i, cfg, nil)
		if err != nil {
			continue // too little history in the window: a quiet series
		}
		if i >= st.from && !math.IsNaN(o.value) { // a day the recording left out is not scored
			out.n++
			if in(o.value, o.point.Band80) {
				out.in80++
			}
			if in(o.value, o.point.Band95) {
				out.in95++
			}
			out.calm++
			wd := rs.own.time(i).Weekday()
			out.days[wd].calm++
			outage := duringOutage(rs.outages, rs.own.start+int64(i)*rs.own.step, rs.own.step)
			if o.flagged && !prev {
				out.runs++
				if outage {
					out.runsOut++
				}
			}
			if o.flagged && !prev && seen.begins(i, o) {
				out.onsets++
				if outage {
					out.outages++
				} else {
					out.days[wd].false++
				}
			}
		}
		seen.note(i, o)
		prev = o.flagged
	}
	return out
}

func in(v float64, b Band) bool { return v >= b.Lo && v <= b.Hi }

// weekLog is a recording's Week after each of its hours: weeks[k] has
// folded in the hours [0, k) of its 1 h sums, as a store that updates it
// when each hour closes holds it.
type weekLog struct {
	start int64 // unix seconds of hour 0
	weeks []Week
}

var weekLogs sync.Map

func weekLogFor(tb testing.TB, file string) weekLog {
	if v, ok := weekLogs.Load(file); ok {
		return v.(weekLog)
	}
	h := loadRecording(tb, file).at(3600)
	l := weekLog{start: h.start, weeks: make([]Week, len(h.v)+1)}
	var w Week
	for i, v := range h.v {
		l.weeks[i] = w
		w.Observe(h.time(i), v)
	}
	l.weeks[len(h.v)] = w
	weekLogs.Store(file, l)
	return l
}

// at is the Week as of unix second end: every hour closed by then folded
// in; nil before the first.
func (l weekLog) at(end int64) *Week {
	k := int((end - l.start) / 3600)
	if l.weeks == nil || k <= 0 {
		return nil
	}
	return &l.weeks[min(k, len(l.weeks)-1)]
}
