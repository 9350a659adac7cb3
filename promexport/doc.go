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
//
// The counts are this process's, since it started: the series in Redis
// add up every instance, and Prometheus sums instances itself.
package promexport
