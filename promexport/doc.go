// Package promexport exposes a Pulse recorder to Prometheus, for Grafana
// and alerting. It is a module of its own
// (go get github.com/pulse-dev/pulse/promexport), so that only apps that
// want Prometheus get its client library in their module graph.
//
// Register a collector over the app's recorder and serve the registry,
// with any router:
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(promexport.NewCollector(rec))
//	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// With Echo, wrap the same handler:
//
//	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
//
// The collector reads the recorder at each scrape and exposes:
//
//	pulse_http_requests_total{method,route,code}
//	                                      requests per route and status class
//	pulse_http_request_duration_seconds{method,route}
//	                                      request durations per route: a histogram
//	pulse_hits_total{series="…"}          hits recorded by this process, per series
//	pulse_request_duration_seconds{series="…"}
//	                                      durations of the series that are not a route's
//	                                      (the app's hits, app-named series)
//	pulse_unique_visitors{series="…"}     unique visitors today (the current UTC day), per series
//	                                      of the recorder that has any, across every instance
//	pulse_pending_hits                    hits recorded and not yet written to Redis
//	pulse_dropped_hits_total              hits dropped after Redis stayed unreachable too long
//	pulse_redis_up                        1 while flushes succeed, 0 after one failed
//	pulse_last_flush_timestamp_seconds    when hits last reached Redis (0: never)
//
// # Labels
//
// A route's series ("GET /posts/:id", "GET /posts/:id status:5xx") are
// exported with the labels method ("GET"), route ("/posts/:id", the
// route's template, never the raw path, so the labels stay bounded) and
// code, the status class: "1xx" to "5xx", or "other". A class in a label
// named code keeps the usual selectors working: code=~"5.." matches
// "5xx". The unmatched requests' classes come with an empty method and
// route="unmatched". Where a route has classes, pulse_http_requests_total
// has one series per class and none for the whole route, so
// sum(rate(pulse_http_requests_total[5m])) counts each request once; where
// status classes are off, code is empty. Error ratio per route:
//
//	sum by (route) (rate(pulse_http_requests_total{code="5xx"}[5m]))
//	  / sum by (route) (rate(pulse_http_requests_total[5m]))
//
// pulse_hits_total keeps every series by its name, app-named ones too.
//
// # Histograms
//
// Each duration histogram is the recorder's own bins, with no re-binning.
// The bins are base-2 exponential buckets on seconds (see the timeseries
// configuration's DurationAccuracy), so:
//
//   - to a scraper that asks for protobuf (Prometheus with
//     --enable-feature=native-histograms) it is a native histogram whose
//     schema is the bins' scale (3 at the default 5 % accuracy), whose zero
//     bucket holds the durations at or below the lower bound of
//     DurationMin's bin, and whose buckets are the bins one for one.
//     Durations above the top of DurationMax's bin are given to the bucket
//     of the longest, so count and sum stay whole:
//
//     histogram_quantile(0.99, sum by (route) (rate(pulse_http_request_duration_seconds[5m])))
//
//   - every scraper gets classic buckets too, at the powers of two from
//     2^-10 s (about 1 ms) to 16 s: le = 0.0009765625, 0.001953125, …, 8,
//     16 and +Inf. A power of two is a bin bound at every scale, so each
//     bucket counts exactly the durations at or below its bound:
//
//     histogram_quantile(0.99, sum by (route, le) (rate(pulse_http_request_duration_seconds_bucket[5m])))
//
// The _sum is exact, and a route whose every hit is timed has a _count
// equal to its requests.
//
// The counts are this process's, since it started: the series in Redis
// add up every instance, and Prometheus sums instances itself.
//
// pulse_unique_visitors is the exception: visitors cannot be summed, a
// person seen by two instances being one visitor. It is read from Redis
// at each scrape, PFCOUNT of the series' HyperLogLog of the current 1-day
// bucket (one round trip per node for all series), which every instance
// adds to, so it is the union over all of them (an estimate, about
// 0.81 % standard error) and every instance exports the same figure: take
// max, not sum, across instances. A series appears once it has a visitor
// today, and the gauge restarts from zero at midnight UTC. When Redis
// does not answer within 2 s the gauge is left out of that scrape and
// the other metrics are still served.
package promexport
