package promexport

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pulse-dev/pulse/internal/series"
)

// collectDurations sends one histogram per series of src that keeps
// durations, when src is a recorder that keeps them: a route's as
// pulse_http_request_duration_seconds{method, route}, any other's (the
// app's hits, an app-named series) as
// pulse_request_duration_seconds{series}.
func (c *Collector) collectDurations(ch chan<- prometheus.Metric) {
	tots, ok := series.DurationTotals(c.src)
	if !ok {
		return
	}
	for _, t := range tots {
		if r, ok := requestOf(t.Name); ok && r.method != "" && r.code == "" {
			ch <- newHistogramMetric(c.httpDurations, t.Hist, r.method, r.route)
			continue
		}
		ch <- newHistogramMetric(c.durations, t.Hist, t.Name)
	}
}
