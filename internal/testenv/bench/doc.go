// Package bench is the HTTP load comparison behind `make bench`: what
// Pulse costs a server per request, against the same server with no
// monitoring (and, on Echo v4, with echoprometheus), on Echo v4, Echo v5
// and net/http, measured with wrk on loopback.
//
// make bench runs it with every variant and writes BENCHMARKS.md; a
// narrower run, e.g. the three frameworks only, is
//
//	go run ./internal/testenv/bench/cmd/loadbench -rounds 12 -scale '' \
//		-variants bare,pulse,bare-v5,pulse-v5,bare-http,pulse-http
//
// and in Go, with a Go HTTP client in place of wrk:
//
//	rep, err := bench.Run(ctx, bench.Config{Rounds: 3, Loader: bench.GoClient{}, ServerCommand: serve})
//	if err == nil && rep.Failed() == nil {
//		fmt.Print(rep.Text()) // the tables, the goals, the ratio line
//	}
//
// A run starts its own redis-server (a free port, a temporary directory,
// no persistence), when pulse-cluster is among the variants a Redis
// Cluster of three masters without replicas (three redis-server processes
// with cluster-enabled on free ports below 55535, so that each bus port,
// port+10000, is valid too, joined with redis-cli --cluster create and
// waited for until every node reports cluster_state:ok), and, for every
// variant in every round, a fresh server process serving one trivial
// route:
//
//   - bare: no monitoring;
//   - bare-middleware: bare with one middleware that only calls the
//     handler, the control: what any middleware costs, and how far a
//     run's ratios stray from the truth;
//   - bare-recorder: bare-middleware with a Recorder that records
//     nothing, its flusher and timers running: what a Recorder costs a
//     server before the first hit;
//   - pulse: Pulse's Hits with routes and status classes, the recorder
//     in its default, batched mode (one flush a second);
//   - pulse-write-through: the same with timeseries.Config.WriteThrough,
//     one Redis pipeline per request;
//   - timed: bare with a middleware that reads the clock twice and adds
//     the duration to an atomic counter, the floor of any duration
//     middleware: pulse's CPU per request is held within 3 % of it;
//   - echoprometheus: github.com/labstack/echo-contrib/echoprometheus,
//     the historical peer;
//   - otel: bare wrapped in otelhttp with the OpenTelemetry SDK's
//     MeterProvider and a ManualReader, the way now pointed to for Echo
//     (labstack/echo-prometheus, the other successor, is not served by
//     the Go module proxy);
//   - pulse-cluster: pulse's middleware and batched recorder writing to
//     the cluster through a *redisc.Cluster (the server gets the node
//     addresses with -cluster);
//   - bare-cluster: bare holding the same cluster client, its slot map
//     loaded, as an app that keeps data in a Redis Cluster does:
//     pulse-cluster's control;
//   - bare-v5 and pulse-v5: the same route on Echo v5, bare and with
//     package echov5;
//   - bare-http and pulse-http: an http.ServeMux with the pattern
//     GET /posts/{id}, bare and behind package pulsehttp.
//
// Each Pulse variant's ratio is to its own framework's bare server in the
// same round.
//
// The variants alternate within a round, all for the same duration, so a
// ratio to bare taken inside one round compares runs that saw the same
// machine: other processes sharing the CPUs slow whole rounds, not single
// variants. Each round draws its own order from Config.Seed, so that no
// variant always follows the same one and inherits what that one leaves
// behind. Each server first gets an untimed warm-up (Config.Warmup, 300 ms
// by default, from a Go client), so the measured second is a running
// server's, not its first moments: heap growing from nothing, the
// recorder dialling Redis and loading its scripts.
//
// Every server counts the requests it served in an outer middleware and
// reports the count when it exits, after the recorder's Close. For the
// Pulse variants the sum of count:86400:hits in Redis (for pulse-cluster
// read through a cluster client) must then equal it exactly; a mismatch
// fails the run. Redis's command counters (INFO stats and INFO
// commandstats, which also counts commands run inside the flush script),
// read from every node before each server starts, as its measured load
// starts and ends, and after it exits, give the commands each variant
// issued, and for pulse-cluster the commands per second on each master.
// The CPU time each request cost is what the server process (its threads'
// /proc schedstat, to the nanosecond) and Redis (used_cpu_*) used while
// the measured load ran, over the responses it got.
// Extra runs of pulse and pulse-cluster at very different request rates
// show that their Redis commands per second, on each node, do not follow
// the rate.
//
// The command is internal/testenv/bench/cmd/loadbench; Run is its library
// form, also driven by this package's smoke test with a Go HTTP client in
// place of wrk.
package bench
