package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/timeseries"
)

// Variant is one server configuration under test.
type Variant string

// The variants, in the order a round starts from. Every framework has its
// bare server, the ratio's denominator for its Pulse variant.
const (
	Bare              Variant = "bare"
	Pulse             Variant = "pulse"
	PulseWriteThrough Variant = "pulse-write-through"
	EchoPrometheus    Variant = "echoprometheus"
	PulseCluster      Variant = "pulse-cluster"
	BareV5            Variant = "bare-v5"
	PulseV5           Variant = "pulse-v5"
	BareHTTP          Variant = "bare-http"
	PulseHTTP         Variant = "pulse-http"
	// PulseCounts is pulse without request durations: hits, routes and
	// status classes only.
	PulseCounts Variant = "pulse-counts"
	// PulseNoVisitors is pulse without unique visitors: hits, routes,
	// status classes and durations, so the visitors' cost reads as the
	// gap between it and pulse.
	PulseNoVisitors Variant = "pulse-no-visitors"
	// BareMiddleware is bare with one Echo middleware that does nothing
	// but call the handler: the control. What it reads against bare is
	// what mounting any middleware costs here, and how far one run's
	// ratios stray from the truth.
	BareMiddleware Variant = "bare-middleware"
	// BareRecorder is bare-middleware with a Recorder that counts
	// nothing: its flusher and timers run, no request is recorded. What
	// it reads against bare-middleware is what a Recorder costs a server
	// before the first hit.
	BareRecorder Variant = "bare-recorder"
	// BareCluster is bare holding a *redisc.Cluster with its slot map
	// loaded, as an app that keeps data in a Redis Cluster already does:
	// pulse-cluster's control. The client's slot map alone (16,384
	// slices) is work for every garbage collection; what pulse-cluster
	// reads against bare-cluster is what Pulse adds on a cluster.
	BareCluster Variant = "bare-cluster"
	// Timed is bare with a middleware that does what any duration
	// middleware must: two clock reads and one atomic add. Pulse's CPU
	// per request is held against it.
	Timed Variant = "timed"
	// OTel is bare wrapped in otelhttp with the OpenTelemetry SDK's
	// MeterProvider and a ManualReader: the way labstack now points
	// Echo users to.
	OTel Variant = "otel"
)

// Variants lists every variant.
var Variants = []Variant{Bare, BareMiddleware, BareRecorder, Timed, Pulse, PulseCounts, PulseNoVisitors, PulseWriteThrough, EchoPrometheus, OTel, PulseCluster, BareCluster, BareV5, PulseV5, BareHTTP, PulseHTTP}

// records reports whether the variant writes hits to Redis.
func (v Variant) records() bool {
	return v == Pulse || v == PulseCounts || v == PulseNoVisitors || v == PulseWriteThrough || v == PulseCluster || v == PulseV5 || v == PulseHTTP
}

// clustered reports whether the variant writes to the Redis Cluster
// instead of the single server.
func (v Variant) clustered() bool { return v == PulseCluster || v == BareCluster }

// bare is the variant v's throughput is compared with: the same
// framework serving the same route with no monitoring.
func (v Variant) bare() Variant {
	switch v {
	case BareV5, PulseV5:
		return BareV5
	case BareHTTP, PulseHTTP:
		return BareHTTP
	}
	return Bare
}

// isBare reports whether v is some framework's bare server.
func (v Variant) isBare() bool { return v == v.bare() }

func (v Variant) valid() bool {
	for _, w := range Variants {
		if v == w {
			return true
		}
	}
	return false
}

// Route is the one route every server serves, and Path the URL the load
// asks for: a route with a parameter, as most app routes have.
const (
	Route = "/posts/:id"
	Path  = "/posts/42"
)

// app is one server under test.
type app struct {
	handler http.Handler
	served  *atomic.Int64
	close   func(ctx context.Context) (timeseries.Health, error)
}

// newApp builds the app of a variant over pool: a *redis.Pool, or a
// *redisc.Cluster for pulse-cluster.
func newApp(v Variant, pool timeseries.Pool, flushInterval time.Duration) (*app, error) {
	a := &app{served: &atomic.Int64{}}
	a.close = func(context.Context) (timeseries.Health, error) { return timeseries.Health{}, nil }
	var rec *timeseries.Recorder
	if v.records() || v == BareRecorder {
		var err error
		rec, err = timeseries.NewRecorder(timeseries.Config{
			Pool: pool, WriteThrough: v == PulseWriteThrough, FlushInterval: flushInterval,
			DisableDurations: v == PulseCounts, DisableVisitors: v == PulseNoVisitors,
		})
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		a.close = func(ctx context.Context) (timeseries.Health, error) {
			err := rec.Close(ctx)
			return rec.Health(), err
		}
	}
	var err error
	switch v {
	case BareRecorder:
		a.handler, err = echoV4App(BareMiddleware, nil, a.served)
	case Bare, BareMiddleware, BareCluster, Pulse, PulseCounts, PulseNoVisitors, PulseWriteThrough, PulseCluster, EchoPrometheus, Timed:
		a.handler, err = echoV4App(v, rec, a.served)
	case OTel:
		a.handler, a.close, err = otelApp(a.served)
	case BareV5, PulseV5:
		a.handler, err = echoV5App(rec, a.served)
	case BareHTTP, PulseHTTP:
		a.handler, err = netHTTPApp(rec, a.served)
	default:
		err = fmt.Errorf("bench: unknown variant %q", v)
	}
	if err != nil {
		_, _ = a.close(context.Background())
		return nil, err
	}
	return a, nil
}

// newPool is the server's Redis pool: enough idle connections that
// write-through, which holds one per request in flight, never dials on
// the request path.
func newPool(addr string) *redis.Pool {
	return &redis.Pool{
		MaxIdle:     256,
		IdleTimeout: time.Minute,
		Dial:        func() (redis.Conn, error) { return dialRedis(addr) },
	}
}

// ServerReport is what a server process prints when it exits.
type ServerReport struct {
	Variant Variant `json:"variant"`
	// Served is how many requests the server answered.
	Served int64 `json:"served"`
	// PendingHits and DroppedHits are the recorder's after Close: both
	// must be 0.
	PendingHits int64  `json:"pending_hits"`
	DroppedHits int64  `json:"dropped_hits"`
	CloseError  string `json:"close_error,omitempty"`
}

const listeningPrefix = "listening "

// Serve is the server process: it serves variant on a free loopback port,
// prints "listening ADDR" once it accepts connections, and on SIGTERM or
// SIGINT (or when ctx ends) stops accepting, waits for the requests in
// flight, closes the recorder and prints its ServerReport as one JSON
// line. args are the command line after "serve".
func Serve(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseServe(args)
	if err != nil {
		return err
	}
	if o.cpuProfile != "" {
		stopProfile, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	pool, closePool, err := o.pool()
	if err != nil {
		return err
	}
	defer closePool()
	a, err := newApp(o.variant, pool, o.flushInterval)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_, _ = a.close(context.Background())
		return fmt.Errorf("bench: serve: %w", err)
	}
	// Catch the signals before saying we listen: the SIGTERM that ends
	// the run may follow at once.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	srv := &http.Server{Handler: a.handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "%s%s\n", listeningPrefix, ln.Addr())

	select {
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("bench: serve: %w", err)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("bench: serve: shutdown: %w", err)
	}
	rep := ServerReport{Variant: o.variant, Served: a.served.Load()}
	h, err := a.close(shutdownCtx)
	if err != nil {
		rep.CloseError = err.Error()
	}
	rep.PendingHits, rep.DroppedHits = h.PendingHits, h.DroppedHits
	return json.NewEncoder(stdout).Encode(rep)
}

// serveOptions is the command line of a server process.
type serveOptions struct {
	variant       Variant
	redisAddr     string
	clusterAddrs  string
	flushInterval time.Duration
	cpuProfile    string
}

func parseServe(args []string) (serveOptions, error) {
	var o serveOptions
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	variant := fs.String("variant", string(Bare), "variant to serve")
	fs.StringVar(&o.redisAddr, "redis", "", "address of the Redis to record into")
	fs.StringVar(&o.clusterAddrs, "cluster", "", "comma-separated addresses of the Redis Cluster nodes to record into (pulse-cluster)")
	fs.DurationVar(&o.flushInterval, "flush-interval", 0, "the recorder's FlushInterval (0: its default, 1 s)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole serve to this file")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.variant = Variant(*variant)
	switch {
	case !o.variant.valid():
		return o, fmt.Errorf("bench: serve: unknown variant %q", o.variant)
	case o.variant.clustered() && o.clusterAddrs == "":
		return o, errors.New("bench: serve: -cluster is required")
	case o.variant.records() && !o.variant.clustered() && o.redisAddr == "":
		return o, errors.New("bench: serve: -redis is required")
	}
	return o, nil
}

// pool is where the variant records: the cluster, or the single server.
func (o serveOptions) pool() (timeseries.Pool, func(), error) {
	if o.variant.clustered() {
		cluster, err := newCluster(strings.Split(o.clusterAddrs, ","))
		if err != nil {
			return nil, nil, fmt.Errorf("bench: serve: %w", err)
		}
		return cluster, func() { _ = cluster.Close() }, nil
	}
	p := newPool(o.redisAddr)
	return p, func() { _ = p.Close() }, nil
}

// startCPUProfile profiles the whole process into path until the
// returned stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("bench: serve: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench: serve: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// readListening reads the server's first line and returns its address.
func readListening(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("bench: server did not start: %w", err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), listeningPrefix)
	if !ok {
		return "", fmt.Errorf("bench: server said %q, want %q", line, listeningPrefix+"ADDR")
	}
	return addr, nil
}
