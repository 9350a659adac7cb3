// Package promexport exposes a Pulse recorder to Prometheus, for Grafana
// and alerting. It is a package of its own so that only apps that want
// Prometheus link its client library.
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(promexport.NewCollector(rec))
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
