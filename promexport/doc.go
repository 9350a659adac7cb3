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
//	pulse_hits_total{series="…"}          hits recorded by this process, per series
//	pulse_pending_hits                    hits recorded and not yet written to Redis
//	pulse_dropped_hits_total              hits dropped after Redis stayed unreachable too long
//	pulse_redis_up                        1 while flushes succeed, 0 after one failed
//	pulse_last_flush_timestamp_seconds    when hits last reached Redis (0: never)
//	pulse_request_duration_seconds{series="…"}
//	                                      request durations recorded by this process, per
//	                                      series that keeps them: a histogram (_bucket{le},
//	                                      _sum, _count)
//	pulse_unique_visitors{series="…"}     unique visitors today (the current UTC day), per series
//	                                      of the recorder that has any, across every instance
//
// The duration histogram has fixed bounds, le = 0.001, 0.0025, 0.005,
// 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 and +Inf seconds, and
// is made at each scrape from the recorder's log-scale histograms of
// every duration recorded since it started. Its _sum is exact, and a
// series whose every hit is timed has a _count equal to its
// pulse_hits_total. Each log bin is counted in the first bucket at or
// above its upper bound: a bucket never counts a duration above its
// bound, but one at most a bin width below a bound, a factor
// (1+α)/(1-α) (10.5 % at the default accuracy α = 5 %), may be counted in
// the next bucket (1 ms exactly lands in le="0.0025"). Durations below
// the recorder's DurationMin count in le="0.001", those above its
// DurationMax only in +Inf.
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
