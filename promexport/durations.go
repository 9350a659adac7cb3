package promexport

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pulse-dev/pulse/timeseries"
)

// collectDurations sends one histogram per series of src that has
// durations, when src is a recorder that keeps them: a route's as
// pulse_http_request_duration_seconds{method, route}, any other's (the
// app's hits, an app-named series) as
// pulse_request_duration_seconds{series}.
func (c *Collector) collectDurations(ch chan<- prometheus.Metric) {
	rec, ok := c.src.(*timeseries.Recorder)
	if !ok {
		return
	}
	for _, t := range rec.DurationTotals() {
		if t.Hist.Count() == 0 { // a series with no duration yet, or one that keeps none
			continue
		}
		if r, ok := timeseries.ParseRouteName(t.Name); ok && r.Method != "" && r.Class == "" {
			ch <- newHistogramMetric(c.httpDurations, t.Hist, r.Method, r.Route)
			continue
		}
		ch <- newHistogramMetric(c.durations, t.Hist, t.Name)
	}
}
