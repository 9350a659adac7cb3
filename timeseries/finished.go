package timeseries

import (
	"github.com/pulse-dev/pulse/internal/series"
	"github.com/pulse-dev/pulse/internal/visitors"
)

// recordFinished records a request the middleware core saw finish: a hit
// in each of its series, its duration in the timed ones, its visitor.
// The clock second and the recording stripe are taken once for all of
// them, and its duration and visitor are recorded under one lock of that
// stripe: a request pays Pulse about 200 ns, and each stripe taken and
// given back costs 10, each lock taken and released 12.
func (r *Recorder) recordFinished(f *series.Finished[*Counter]) {
	var tb [series.MaxTimed]*Counter
	timed := present(f.Timed[:], tb[:0])
	sec := r.now()
	st := stripes.Get().(*stripe)
	// Write-through writes the duration with the hits, now.
	lat := !r.writeThrough && r.lat != nil && len(timed) > 0
	if r.writeThrough {
		var cb [series.MaxCounted]*Counter
		r.writeNow(sec, timed, f.Duration, present(f.Counted[:], cb[:0]))
	} else {
		for _, c := range timed {
			c.add(st.index, sec, 1)
		}
		for _, c := range f.Counted {
			if c != nil {
				c.add(st.index, sec, 1)
			}
		}
	}
	var salt *visitors.Salt
	if r.uv != nil && f.Visited != 0 && !f.Visitor.Empty() {
		salt = r.uv.salt(sec)
	}
	if lat || salt != nil {
		mu := &r.locks[st.index]
		mu.Lock()
		if lat {
			r.lat.recordLocked(st.index, sec, f.Duration, timed)
		}
		if salt != nil {
			r.uv.recordLocked(st.index, sec, salt, f.Visitor, &f.Timed, f.Visited)
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

// The middleware core records requests through this hook, so the package
// exports no method for it (see series.RecordFinished).
func init() {
	series.RecordFinished = func(r *Recorder, f series.Finished[*Counter]) { r.recordFinished(&f) }
	series.Keeps = func(r *Recorder) series.Kept { return series.Kept{Durations: r.lat != nil, Visitors: r.uv != nil} }
}
