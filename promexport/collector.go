package promexport

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pulse-dev/pulse/timeseries"
)

// Source is what the collector reads; *timeseries.Recorder satisfies it.
type Source interface {
	Totals() []timeseries.SeriesTotal
	Health() timeseries.Health
}

// Collector is a prometheus.Collector over a recorder. It keeps no state
// of its own: every scrape reads the recorder.
type Collector struct {
	src           Source
	hits          *prometheus.Desc
	requests      *prometheus.Desc
	pending       *prometheus.Desc
	dropped       *prometheus.Desc
	redisUp       *prometheus.Desc
	lastFlush     *prometheus.Desc
	durations     *prometheus.Desc
	httpDurations *prometheus.Desc
	visitors      *prometheus.Desc
}

// NewCollector returns a collector of src, usually a *timeseries.Recorder.
// It panics if src is nil.
func NewCollector(src Source) *Collector {
	if src == nil {
		panic("promexport: NewCollector: nil source")
	}
	return &Collector{
		src: src,
		hits: prometheus.NewDesc("pulse_hits_total",
			"Hits recorded by this process, per series.", []string{"series"}, nil),
		requests: prometheus.NewDesc("pulse_http_requests_total",
			"Requests recorded by this process, per route and status class (code is 2xx, 4xx, …; empty where classes are off).",
			[]string{"method", "route", "code"}, nil),
		pending: prometheus.NewDesc("pulse_pending_hits",
			"Hits recorded and not yet written to Redis.", nil, nil),
		dropped: prometheus.NewDesc("pulse_dropped_hits_total",
			"Hits dropped because Redis stayed unreachable longer than the recorder keeps them.", nil, nil),
		redisUp: prometheus.NewDesc("pulse_redis_up",
			"1 while the recorder's flushes to Redis succeed, 0 after one failed.", nil, nil),
		lastFlush: prometheus.NewDesc("pulse_last_flush_timestamp_seconds",
			"Unix time at which recorded hits last reached Redis; 0 if never.", nil, nil),
		durations: prometheus.NewDesc("pulse_request_duration_seconds",
			"Durations of the requests recorded by this process, per series that is not a route's (the app's hits, app-named series).", []string{"series"}, nil),
		httpDurations: prometheus.NewDesc("pulse_http_request_duration_seconds",
			"Durations of the requests recorded by this process, per route.", []string{"method", "route"}, nil),
		visitors: prometheus.NewDesc("pulse_unique_visitors",
			"Unique visitors today (the current UTC day), per series that has any: the estimate of its 1-day HyperLogLog in Redis, the union over every instance of the app.",
			[]string{"series"}, nil),
	}
}

// Describe sends the descriptors of every metric.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.hits
	ch <- c.requests
	ch <- c.pending
	ch <- c.dropped
	ch <- c.redisUp
	ch <- c.lastFlush
	ch <- c.durations
	ch <- c.httpDurations
	ch <- c.visitors
}

// collectRequests sends the hits of every route's series, by status
// class where the route has classes and whole where it has none, so that
// summing the counter over its labels counts each request once.
func (c *Collector) collectRequests(ch chan<- prometheus.Metric, totals []timeseries.SeriesTotal) {
	for _, r := range timeseries.RouteRequests(totals) {
		ch <- prometheus.MustNewConstMetric(c.requests, prometheus.CounterValue, float64(r.Hits), r.Method, r.Route, r.Class)
	}
}

// Collect reads the recorder and sends the current values.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	totals := c.src.Totals()
	for _, t := range totals {
		ch <- prometheus.MustNewConstMetric(c.hits, prometheus.CounterValue, float64(t.Hits), t.Name)
	}
	c.collectRequests(ch, totals)
	c.collectDurations(ch)
	c.collectVisitors(ch, totals)
	h := c.src.Health()
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(h.PendingHits))
	ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, float64(h.DroppedHits))
	up := 0.0
	if h.RedisUp {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(c.redisUp, prometheus.GaugeValue, up)
	last := 0.0
	if !h.LastFlush.IsZero() {
		last = float64(h.LastFlush.UnixNano()) / 1e9
	}
	ch <- prometheus.MustNewConstMetric(c.lastFlush, prometheus.GaugeValue, last)
}

var _ prometheus.Collector = (*Collector)(nil)
