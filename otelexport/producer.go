package otelexport

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/pulse-dev/pulse/internal/seriesname"
	"github.com/pulse-dev/pulse/timeseries"
)

// Attribute keys of Pulse's own.
const (
	StatusClassKey = attribute.Key("pulse.http.status_class")
	SeriesKey      = attribute.Key("pulse.series")
)

// Semantic-convention attribute keys.
const (
	methodKey = attribute.Key("http.request.method")
	routeKey  = attribute.Key("http.route")
)

// day is the precision whose current bucket is "today".
const day = 86400

// visitorsTimeout bounds the Redis read of one collection.
const visitorsTimeout = 2 * time.Second

// Producer is a metric.Producer over a recorder. It keeps no counts of
// its own: every Produce reads the recorder.
type Producer struct {
	rec   *timeseries.Recorder
	start time.Time
	now   func() time.Time
}

var _ metric.Producer = (*Producer)(nil)

// NewProducer returns a producer of rec's counts, cumulative from now:
// make it right after the recorder. It panics if rec is nil.
func NewProducer(rec *timeseries.Recorder) *Producer {
	if rec == nil {
		panic("otelexport: NewProducer: nil recorder")
	}
	return &Producer{rec: rec, start: time.Now(), now: time.Now}
}

// Produce reads the recorder and returns its metrics in one scope.
func (p *Producer) Produce(ctx context.Context) ([]metricdata.ScopeMetrics, error) {
	now := p.now()
	totals := p.rec.Totals()
	ms := p.counts(totals, now)
	ms = append(ms, p.durations(now)...)
	if v, ok := p.visitors(ctx, totals, now); ok {
		ms = append(ms, v)
	}
	return []metricdata.ScopeMetrics{{
		Scope:   instrumentation.Scope{Name: "github.com/pulse-dev/pulse/otelexport"},
		Metrics: ms,
	}}, nil
}

// counts are the requests per route and class, and the hits per series.
// A route with classes is counted by class and not whole, so a sum over
// the attributes counts each request once. A series that has counted
// nothing yet (a status class no answer fell in, the overflow series) is
// left out: the counts are cumulative, so one that has a point keeps it.
func (p *Producer) counts(totals []timeseries.SeriesTotal, now time.Time) []metricdata.Metrics {
	var requests, hits []metricdata.DataPoint[int64]
	for _, t := range totals {
		if t.Hits == 0 {
			continue
		}
		hits = append(hits, metricdata.DataPoint[int64]{StartTime: p.start, Time: now, Value: t.Hits,
			Attributes: attribute.NewSet(SeriesKey.String(t.Name))})
	}
	for _, r := range timeseries.RouteRequests(totals) {
		if r.Hits == 0 {
			continue
		}
		requests = append(requests, metricdata.DataPoint[int64]{StartTime: p.start, Time: now, Value: r.Hits,
			Attributes: attribute.NewSet(methodKey.String(method(r.Method)), routeKey.String(r.Route), StatusClassKey.String(r.Class))})
	}
	return []metricdata.Metrics{
		{Name: "pulse.http.server.requests", Description: "Requests recorded by this process, per route and status class.",
			Unit: "{request}", Data: cumulative(requests)},
		{Name: "pulse.series.hits", Description: "Hits recorded by this process, per series.",
			Unit: "{hit}", Data: cumulative(hits)},
	}
}

// otherMethod is the semantic conventions' http.request.method for a
// method the instrumentation does not know.
const otherMethod = "_OTHER"

// method is a route's method as the conventions give it: the method the
// middlewares name, or otherMethod for those they fold into OTHER and
// for the unmatched requests, whose series keep no method.
func method(m string) string {
	if m == "" || m == seriesname.OtherMethod {
		return otherMethod
	}
	return m
}

func cumulative(points []metricdata.DataPoint[int64]) metricdata.Sum[int64] {
	return metricdata.Sum[int64]{DataPoints: points, Temporality: metricdata.CumulativeTemporality, IsMonotonic: true}
}

// durations are the histograms of every series that keeps durations: a
// route's under the conventions' name, any other's under Pulse's.
func (p *Producer) durations(now time.Time) []metricdata.Metrics {
	tots := p.rec.DurationTotals()
	if len(tots) == 0 {
		return nil
	}
	var routes, others []metricdata.ExponentialHistogramDataPoint[float64]
	for _, t := range tots {
		if t.Hist.Count() == 0 { // a series with no duration yet, or one that keeps none
			continue
		}
		point := pointOf(t.Hist)
		point.StartTime, point.Time = p.start, now
		if r, ok := timeseries.ParseRouteName(t.Name); ok && r.Method != "" && r.Class == "" {
			point.Attributes = attribute.NewSet(methodKey.String(method(r.Method)), routeKey.String(r.Route))
			routes = append(routes, point)
			continue
		}
		point.Attributes = attribute.NewSet(SeriesKey.String(t.Name))
		others = append(others, point)
	}
	var out []metricdata.Metrics
	if len(routes) > 0 {
		out = append(out, metricdata.Metrics{Name: "http.server.request.duration",
			Description: "Duration of HTTP server requests.", Unit: "s", Data: histogram(routes)})
	}
	if len(others) > 0 {
		out = append(out, metricdata.Metrics{Name: "pulse.series.duration",
			Description: "Durations of the requests of a series that is not a route's.", Unit: "s", Data: histogram(others)})
	}
	return out
}

func histogram(points []metricdata.ExponentialHistogramDataPoint[float64]) metricdata.ExponentialHistogram[float64] {
	return metricdata.ExponentialHistogram[float64]{DataPoints: points, Temporality: metricdata.CumulativeTemporality}
}

// visitors is today's unique visitors per series that has any, read
// from Redis; ok is false when the recorder keeps no daily visitors or
// Redis did not answer.
func (p *Producer) visitors(ctx context.Context, totals []timeseries.SeriesTotal, now time.Time) (metricdata.Metrics, bool) {
	if len(totals) == 0 {
		return metricdata.Metrics{}, false
	}
	names := make([]string, len(totals))
	for i, t := range totals {
		names[i] = t.Name
	}
	ctx, cancel := context.WithTimeout(ctx, visitorsTimeout)
	defer cancel()
	// A schema that keeps no daily visitors answers an error too.
	today, err := p.rec.Store().CurrentVisitors(ctx, names, day)
	if err != nil {
		return metricdata.Metrics{}, false
	}
	var points []metricdata.DataPoint[int64]
	for _, name := range names {
		if n := today[name]; n > 0 {
			points = append(points, metricdata.DataPoint[int64]{
				Attributes: attribute.NewSet(SeriesKey.String(name)), Time: now, Value: n})
		}
	}
	return metricdata.Metrics{Name: "pulse.visitors", Description: "Unique visitors today (UTC), per series, across every instance.",
		Unit: "{visitor}", Data: metricdata.Gauge[int64]{DataPoints: points}}, len(points) > 0
}
