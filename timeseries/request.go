package timeseries

import (
	"time"

	"github.com/pulse-dev/pulse/timeseries/internal/visitors"
)

// MaxTimed bounds the series a Request is timed in, and counts a visitor
// in: the hits series, the route's, an app-named one, one spare.
const MaxTimed = 4

// MaxCounted bounds the series a Request is only counted in: its status
// class and its route's status class.
const MaxCounted = 2

// Visitor is who made a request, as an adapter knows it: the client's
// address and User-Agent, or the id the app gave. The recorder hashes it
// under the day's salt at once and keeps only that hash.
type Visitor struct {
	// Addr is the client's IP address, without a port: with it, each
	// connection of one client would be a visitor of its own.
	Addr      string
	UserAgent string
	// ID, when set, is the app's id, hashed instead of Addr and UserAgent.
	ID string
}

// Empty reports whether v names nobody: the request counts no visitor.
func (v Visitor) Empty() bool { return v.Addr == "" && v.UserAgent == "" && v.ID == "" }

// Request is one finished request, as a middleware hands it to
// Recorder.RecordRequest. Nil entries of Timed and Counted are no series.
type Request struct {
	// Duration is counted in the durations of the Timed series (those
	// that keep durations), each of which counts a hit too.
	Duration time.Duration
	Timed    [MaxTimed]*Counter
	// Counted series count a hit only.
	Counted [MaxCounted]*Counter
	// Visitor, unless Empty, is counted in the Timed series whose bits
	// are set in Visited: bit i for Timed[i].
	Visitor Visitor
	Visited uint8
}

// RecordRequest records a finished request: a hit in each of its series,
// its duration in the timed ones, its visitor in those of Visited. The
// clock second and the recording stripe are taken once for all of them,
// and the duration and the visitor are recorded under one lock. It takes
// the Request by value and allocates nothing.
func (r *Recorder) RecordRequest(q Request) {
	var tb [MaxTimed]*Counter
	var cb [MaxCounted]*Counter
	r.record(present(q.Timed[:], tb[:0]), present(q.Counted[:], cb[:0]), q.Duration, &q)
}

// Record records one hit in each counter, stamped with the clock once.
// In the default mode it only adds to memory; in write-through mode it
// writes to Redis before returning, unless Redis is failing, in which
// case the hits wait in memory for the flusher.
func (r *Recorder) Record(counters ...*Counter) { r.record(nil, counters, 0, nil) }

// KeepsDurations reports whether r keeps request durations: a middleware
// reads no clock when it does not.
func (r *Recorder) KeepsDurations() bool { return r.durations != nil }

// KeepsVisitors reports whether r counts unique visitors: a middleware
// works out a request's Visitor (parses its address, calls the app's
// hook) only when it does.
func (r *Recorder) KeepsVisitors() bool { return r.visitors != nil }

// record is the one way hits reach a Recorder: a hit in each series of
// timed and counted at the clock's second, d in the durations of the
// timed ones, and q's visitor when q is not nil.
func (r *Recorder) record(timed, counted []*Counter, d time.Duration, q *Request) {
	sec := r.counts.second()
	st := stripes.Get().(*stripe)
	// Write-through writes the duration with the hits, now.
	timedD := !r.writeThrough && r.durations != nil && len(timed) > 0
	if r.writeThrough {
		r.writeNow(sec, timed, d, counted)
	} else {
		for _, c := range timed {
			c.add(st.index, sec, 1)
		}
		for _, c := range counted {
			c.add(st.index, sec, 1)
		}
		r.countSlow(st.index, sec, d, timed)
	}
	var salt *visitors.Salt
	if q != nil && r.visitors != nil && q.Visited != 0 && !q.Visitor.Empty() {
		salt = r.visitors.salt(sec)
	}
	if timedD || salt != nil {
		mu := &r.counts.locks[st.index]
		mu.Lock()
		if timedD {
			r.durations.recordLocked(st.index, sec, d, timed)
		}
		if salt != nil {
			r.visitors.recordLocked(st.index, sec, salt, q.Visitor, &q.Timed, q.Visited)
		}
		mu.Unlock()
	}
	stripes.Put(st)
}

// present appends the non-nil Counters of cs to out.
func present(cs []*Counter, out []*Counter) []*Counter {
	for _, c := range cs {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}
