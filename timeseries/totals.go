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
	counters := r.counters
	r.mu.Unlock()
	out := make([]SeriesTotal, 0, len(counters))
	for _, c := range counters {
		n := c.moved.Load()
		for i := range c.shards {
			for j := range c.shards[i].slots {
				n += c.shards[i].slots[j].n.Load()
			}
		}
		out = append(out, SeriesTotal{Name: c.name, Hits: n})
	}
	return out
}
