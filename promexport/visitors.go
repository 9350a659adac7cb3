package promexport

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pulse-dev/pulse/timeseries"
)

// day is the precision whose current bucket is "today".
const day = 86400

// visitorsTimeout bounds the Redis read of one scrape, well within
// Prometheus' default scrape timeout (10 s).
const visitorsTimeout = 2 * time.Second

// collectVisitors sends today's unique visitors of every series of the
// recorder that has any: PFCOUNT of the series' current 1-day sketch,
// which every instance of the app adds to, so the figure is the union
// over all of them, not this process's share. It reads Redis, in one
// round trip per node; when the read fails the gauge is left out of the
// scrape (pulse_redis_up tells why), and the other metrics stay.
func (c *Collector) collectVisitors(ch chan<- prometheus.Metric, totals []timeseries.SeriesTotal) {
	rec, ok := c.src.(*timeseries.Recorder)
	if !ok || len(totals) == 0 {
		return
	}
	names := make([]string, len(totals))
	for i, t := range totals {
		names[i] = t.Name
	}
	ctx, cancel := context.WithTimeout(context.Background(), visitorsTimeout)
	defer cancel()
	// A schema that keeps no daily visitors answers ErrNoVisitors.
	today, err := rec.Store().CurrentVisitors(ctx, names, day)
	if err != nil {
		return
	}
	for _, name := range names {
		if n := today[name]; n > 0 {
			ch <- prometheus.MustNewConstMetric(c.visitors, prometheus.GaugeValue, float64(n), name)
		}
	}
}
