package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/pulse-dev/pulse/example/forum"
	"github.com/pulse-dev/pulse/timeseries"
)

// options is what the command line and the environment choose.
type options struct {
	Addr     string
	RedisURL string
	// RedisServer is the redis-server binary started when RedisURL is
	// empty (REDIS_SERVER); empty means "redis-server" from PATH, and
	// "embedded" skips it for the in-process server.
	RedisServer string
	// SpillDir keeps the hits that could not be written at shutdown, for
	// the next start to send.
	SpillDir      string
	DatabaseURL   string
	DashboardUser string
	DashboardPass string
	// AlertRules is a rule file for package alert; AlertmanagerURL,
	// where its notifications go.
	AlertRules      string
	AlertmanagerURL string
	DemoTraffic     bool
	// TrustedProxies are the ranges whose X-Forwarded-For names the
	// client (TRUSTED_PROXIES); none by default.
	TrustedProxies []*net.IPNet
	Timeouts       timeouts
	// Ready, when set, receives the listening address once the server
	// accepts connections.
	Ready func(addr string)
	// logTo, in tests, receives the log.
	logTo io.Writer
	// clock, in tests, stamps the recorded hits; nil is the system's.
	clock timeseries.Clock
}

// timeouts are the server's bounds on slow clients, shutdown and the
// database.
type timeouts struct {
	// Read bounds reading a request, headers and body; Write, from the end
	// of the headers to the end of the answer; Idle, a keep-alive
	// connection waiting for its next request.
	Read, Write, Idle time.Duration
	// Shutdown bounds a stop: requests in flight get all of it but
	// shutdownReserve, then are cut off, and the reserve is for flushing.
	Shutdown time.Duration
	// DB bounds the database work of one request.
	DB time.Duration
}

var defaultTimeouts = timeouts{
	Read:     10 * time.Second,
	Write:    15 * time.Second,
	Idle:     15 * time.Second,
	Shutdown: 10 * time.Second,
	DB:       forum.DefaultQueryTimeout,
}

// withDefaults fills zero fields from defaultTimeouts.
func (t timeouts) withDefaults() timeouts {
	d := defaultTimeouts
	for _, f := range []struct{ v, def *time.Duration }{
		{&t.Read, &d.Read}, {&t.Write, &d.Write}, {&t.Idle, &d.Idle}, {&t.Shutdown, &d.Shutdown}, {&t.DB, &d.DB},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return t
}

// parseOptions reads the environment and the command line; a flag wins
// over the variable of the same name.
func parseOptions() options {
	addr := os.Getenv("ADDR")
	if addr == "" {
		addr = ":8080"
	}
	opts := options{
		RedisURL:        os.Getenv("REDIS_URL"),
		RedisServer:     os.Getenv("REDIS_SERVER"),
		SpillDir:        os.Getenv("SPILL_DIR"),
		DatabaseURL:     os.Getenv("DATABASE_URL"),
		DashboardUser:   os.Getenv("DASHBOARD_USER"),
		DashboardPass:   os.Getenv("DASHBOARD_PASSWORD"),
		AlertRules:      os.Getenv("ALERT_RULES"),
		AlertmanagerURL: os.Getenv("ALERTMANAGER_URL"),
	}
	proxies, err := parseTrustedProxies(os.Getenv("TRUSTED_PROXIES"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	opts.TrustedProxies = proxies
	flag.StringVar(&opts.Addr, "addr", addr, "listen address (env ADDR)")
	flag.StringVar(&opts.RedisServer, "redis-server", opts.RedisServer,
		`with no REDIS_URL, the redis-server binary to start privately; "embedded" for the in-process server (env REDIS_SERVER)`)
	flag.BoolVar(&opts.DemoTraffic, "demo-traffic", false, "generate light background traffic")
	timeoutFlags(&opts.Timeouts)
	flag.Parse()
	return opts
}

// timeoutFlags defines the flags of the server's timeouts, each
// defaulting to its environment variable.
func timeoutFlags(t *timeouts) {
	flag.DurationVar(&t.Read, "read-timeout", envDuration("READ_TIMEOUT", defaultTimeouts.Read), "bound on reading a request, body included (env READ_TIMEOUT)")
	flag.DurationVar(&t.Write, "write-timeout", envDuration("WRITE_TIMEOUT", defaultTimeouts.Write), "bound on writing an answer (env WRITE_TIMEOUT)")
	flag.DurationVar(&t.Idle, "idle-timeout", envDuration("IDLE_TIMEOUT", defaultTimeouts.Idle), "bound on an idle keep-alive connection (env IDLE_TIMEOUT)")
	flag.DurationVar(&t.Shutdown, "shutdown-timeout", envDuration("SHUTDOWN_TIMEOUT", defaultTimeouts.Shutdown),
		"bound on a stop: requests in flight get all but 2s of it, flushing the rest (env SHUTDOWN_TIMEOUT)")
	flag.DurationVar(&t.DB, "db-timeout", envDuration("DB_TIMEOUT", defaultTimeouts.DB), "bound on the database work of one request (env DB_TIMEOUT)")
}

// envDuration reads a duration such as "10s" from the environment.
func envDuration(name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		fmt.Fprintf(os.Stderr, "example: %s=%q is not a positive duration such as 10s\n", name, v)
		os.Exit(2)
	}
	return d
}
