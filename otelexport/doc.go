// Package otelexport hands a Pulse recorder's counts to an OpenTelemetry
// MeterProvider, for teams whose metrics travel by OTLP. It is a module
// of its own (go get github.com/pulse-dev/pulse/otelexport), so that only
// apps that want OpenTelemetry get its SDK in their module graph.
//
// The recorder has already aggregated what it counts, so the export is a
// metric.Producer, which a reader asks at each collection: no
// instrument is called per request, and nothing is counted twice.
//
//	exp, err := otlpmetrichttp.New(ctx)
//	...
//	reader := metric.NewPeriodicReader(exp, metric.WithProducer(otelexport.NewProducer(rec)))
//	provider := metric.NewMeterProvider(metric.WithReader(reader))
//	defer provider.Shutdown(ctx)
//
// The producer exports, cumulative since it was made:
//
//	http.server.request.duration       exponential histogram, s, per route: http.request.method,
//	                                   http.route; the recorder's bins bucket for bucket
//	pulse.http.server.requests         sum, per route and status class: http.request.method,
//	                                   http.route, pulse.http.status_class ("2xx" … "5xx", "other")
//	pulse.series.duration              exponential histogram, s, per series that is not a route's
//	                                   (the app's hits, app-named series): pulse.series
//	pulse.series.hits                  sum, per series: pulse.series
//	pulse.visitors                     gauge, today's unique visitors per series that has any,
//	                                   across every instance of the app: pulse.series
//
// The duration histograms are the recorder's base-2 exponential bins,
// whose scale is OpenTelemetry's (3 at the default 5 % accuracy): bucket
// i of the export is the recorder's bin i+1, the zero bucket its
// underflow bin with the lower bound of DurationMin's bin as threshold.
// Durations above the top of DurationMax's bin are given to the bucket of
// the longest, so count and sum stay whole. Min and max are exact.
//
// http.request.method is "_OTHER", the conventions' value for a method
// the instrumentation does not know, for the methods the middlewares fold
// into "OTHER" and for the unmatched requests, whose series keep no
// method. A series that has counted nothing yet (a status class no answer
// fell in, the overflow series) has no point.
//
// The semantic conventions give a request's status as
// http.response.status_code, a number; Pulse counts status classes, not
// codes, so the class goes in an attribute of Pulse's own. The counts are
// this process's, since it started, like any OpenTelemetry SDK's; the
// visitors are read from Redis at each collection (one round trip per
// node), the union over every instance, and left out of a collection
// when Redis does not answer in time.
package otelexport
