package timeseries

// SeriesTotal is the number of hits one series has recorded in this
// process since the Recorder started, written to Redis or not.
type SeriesTotal struct {
	Name string
	Hits int64
}

// Totals returns every series' total, in the order the series were first
// used (the overflow series first). It is meant for exporters such as a
// Prometheus collector: the totals only grow.
func (r *Recorder) Totals() []SeriesTotal {
	r.mu.Lock()
	all := r.counts.all
	r.mu.Unlock()
	out := make([]SeriesTotal, 0, len(all))
	for _, c := range all {
		out = append(out, SeriesTotal{Name: c.name, Hits: c.moved.Load() + c.ringHits()})
	}
	return out
}
