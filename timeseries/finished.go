package timeseries

import "github.com/pulse-dev/pulse/internal/series"

// recordFinished records a request the middleware core saw finish: a hit
// in each of its series, its duration in the timed ones, its visitor.
// The clock second and the recording stripe are taken once for all of
// them: a request pays Pulse about 200 ns, and each stripe taken and
// given back costs 10.
func (r *Recorder) recordFinished(f *series.Finished) {
	var tb [series.MaxTimed]*Counter
	var cb [series.MaxCounted]*Counter
	timed, counted := countersIn(f.Timed[:], tb[:0]), countersIn(f.Counted[:], cb[:0])
	sec := r.now()
	st := stripes.Get().(*stripe)
	if r.writeThrough {
		r.writeNow(sec, timed, f.Duration, counted)
	} else {
		for _, c := range timed {
			c.add(st.index, sec, 1)
		}
		for _, c := range counted {
			c.add(st.index, sec, 1)
		}
		if r.lat != nil && len(timed) > 0 {
			r.lat.record(st.index, sec, f.Duration, timed)
		}
	}
	if f.Visited != 0 && !f.Visitor.Empty() {
		r.recordVisitor(st, sec, f.Visitor, f.Timed, f.Visited)
	}
	stripes.Put(st)
}

// countersIn appends the Counters among cs to out.
func countersIn(cs []any, out []*Counter) []*Counter {
	for _, c := range cs {
		if p, _ := c.(*Counter); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// The middleware core records requests through this hook, so the package
// exports no method for it (see series.RecordFinished).
func init() {
	series.RecordFinished = func(rec any, f series.Finished) {
		rec.(*Recorder).recordFinished(&f)
	}
}
