package bench

import (
	"bytes"
	"context"
	"maps"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"

	"github.com/pulse-dev/pulse/internal/testenv/ports"
)

// serveEnv makes the test binary act as a server process, so the smoke
// test drives real processes without building the command first.
const serveEnv = "LOADBENCH_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		if err := Serve(context.Background(), os.Args[1:], os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func serverCommand(t *testing.T) func(args []string) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return func(args []string) *exec.Cmd {
		cmd := exec.Command(self, args...)
		// Under -race a process waits a second at exit unless told not to.
		cmd.Env = append(os.Environ(), serveEnv+"=1", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
		return cmd
	}
}

// TestRunCountsEveryHit is `make bench` in small: every variant in its
// own server process for under a second, a Go client in place of wrk,
// and the hits Redis holds checked against the requests served. The run
// starts its own Redis Cluster for pulse-cluster.
// testFlushInterval is the servers' FlushInterval in these tests.
const testFlushInterval = 100 * time.Millisecond

func TestRunCountsEveryHit(t *testing.T) {
	srv := redistest.Start(t)
	var progress bytes.Buffer
	rep, err := Run(context.Background(), Config{
		Rounds:           1,
		Duration:         300 * time.Millisecond,
		FlushInterval:    testFlushInterval,
		Connections:      4,
		ScaleConnections: []int{1},
		ScaleDuration:    300 * time.Millisecond,
		GOMAXPROCS:       1,
		Loader:           GoClient{},
		ServerCommand:    serverCommand(t),
		RedisAddr:        srv.Addr,
		Progress:         &progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Failed(); err != nil {
		t.Fatal(err)
	}
	// The rounds, then a paced and an unpaced extra run of pulse and of
	// pulse-cluster.
	if got, want := len(rep.Runs), len(Variants)+4; got != want {
		t.Fatalf("%d runs, want %d", got, want)
	}
	// Four series (hits, route, status class, route's status class) at six
	// precisions.
	const seriesPrecisions = 4 * 6
	for _, run := range rep.Runs {
		// The server ran the warm-up, then the measured load.
		runTime := run.Load.Duration + rep.Config.Warmup
		t.Logf("%s c=%d: %d served, %d hits, calls %v, server stderr %q", run.Variant, run.Connections, run.Server.Served, run.HitsInRedis, run.Calls, run.ServerLog)
		if run.Load.Requests == 0 || run.Server.Served < run.Load.Requests {
			t.Errorf("%s: client got %d responses, server served %d", run.Variant, run.Load.Requests, run.Server.Served)
		}
		if run.Load.Errors != 0 {
			t.Errorf("%s: %d errors", run.Variant, run.Load.Errors)
		}
		if run.ServerCPU <= 0 {
			t.Errorf("%s: server CPU time not measured", run.Variant)
		}
		if run.LoadCalls > run.CallsTotal {
			t.Errorf("%s: %d commands under load, more than the %d of the whole run", run.Variant, run.LoadCalls, run.CallsTotal)
		}
		// One connection waiting 1 ms between requests: under 1000/s.
		if run.Pause > 0 && (run.Connections != 1 || run.Load.RPS >= 1000) {
			t.Errorf("paced run: %d connections, %.0f req/s", run.Connections, run.Load.RPS)
		}
		switch run.Variant {
		case Bare, BareV5, BareHTTP, EchoPrometheus:
			if run.HitsInRedis != 0 || run.CallsTotal != 0 || run.Processed != 0 {
				t.Errorf("%s wrote to Redis: %d hits, calls %v, %d processed", run.Variant, run.HitsInRedis, run.Calls, run.Processed)
			}
		case BareCluster:
			// Its cluster client reads the slot map, and nothing more.
			if run.HitsInRedis != 0 || run.Calls["cluster|slots"] == 0 || run.CallsTotal != run.Calls["cluster|slots"] {
				t.Errorf("bare-cluster: %d hits, calls %v: want the slot map read only", run.HitsInRedis, run.Calls)
			}
		case BareRecorder:
			// Its Recorder fetched the day's salt and recorded nothing.
			if run.HitsInRedis != 0 || run.Calls["set"] == 0 || run.Calls["hincrby"] != 0 || run.Calls["pfadd"] != 0 {
				t.Errorf("bare-recorder: %d hits, calls %v: want the salt's SET and no count", run.HitsInRedis, run.Calls)
			}
		case PulseV5, PulseHTTP:
			if run.HitsInRedis != run.Server.Served {
				t.Errorf("%s: %d hits in Redis, %d served", run.Variant, run.HitsInRedis, run.Server.Served)
			}
		case Pulse:
			if run.HitsInRedis != run.Server.Served {
				t.Errorf("pulse: %d hits in Redis, %d served", run.HitsInRedis, run.Server.Served)
			}
			// A flush every 100 ms while under load, and one at Close;
			// each is one script whatever the request count (EVALSHA, and
			// EVAL once to load it).
			flushes := run.Calls["eval"] + run.Calls["evalsha"]
			if flushes < 2 || flushes > maxFlushes(runTime)+1 {
				t.Errorf("pulse: %d flush scripts in %s", flushes, run.Load.Duration)
			}
			// Per flush, one HINCRBY per series and precision (two where
			// the flush spans a bucket boundary) and one ZADD each, and as
			// many again for the durations' sums.
			if n := run.Calls["hincrby"]; n < seriesPrecisions || n > 4*seriesPrecisions*flushes {
				t.Errorf("pulse: %d HINCRBY in %d flushes for %d requests", n, flushes, run.Server.Served)
			}
			if run.Calls["expireat"] == 0 {
				t.Errorf("pulse: no EXPIREAT: no duration hash was written")
			}
			if run.Calls["pfadd"] == 0 {
				t.Errorf("pulse: no PFADD: no visitor was written")
			}
		case PulseCounts:
			if run.HitsInRedis != run.Server.Served {
				t.Errorf("pulse-counts: %d hits in Redis, %d served", run.HitsInRedis, run.Server.Served)
			}
			// No durations: only the hits' HINCRBY, and no duration hash.
			flushes := run.Calls["eval"] + run.Calls["evalsha"]
			if n := run.Calls["hincrby"]; flushes < 2 || n < seriesPrecisions || n > 2*seriesPrecisions*flushes {
				t.Errorf("pulse-counts: %d HINCRBY in %d flushes for %d requests", n, flushes, run.Server.Served)
			}
			// The only keys given an expiry are the visitors' sketches,
			// one EXPIREAT beside each PFADD: no duration hash.
			if n, v := run.Calls["expireat"], run.Calls["pfadd"]; n != v || run.Calls["hmget"] != 0 {
				t.Errorf("pulse-counts: %d EXPIREAT for %d PFADD, %d HMGET: want no duration hash", n, v, run.Calls["hmget"])
			}
		case PulseNoVisitors:
			if run.HitsInRedis != run.Server.Served {
				t.Errorf("pulse-no-visitors: %d hits in Redis, %d served", run.HitsInRedis, run.Server.Served)
			}
			if run.Calls["pfadd"] != 0 || run.Calls["hmget"] == 0 {
				t.Errorf("pulse-no-visitors: %d PFADD, %d HMGET: want durations and no visitors", run.Calls["pfadd"], run.Calls["hmget"])
			}
		case PulseCluster:
			if run.HitsInRedis != run.Server.Served {
				t.Errorf("pulse-cluster: %d hits in the cluster, %d served", run.HitsInRedis, run.Server.Served)
			}
			if len(run.Nodes) != 3 {
				t.Fatalf("pulse-cluster: %d nodes measured, want 3", len(run.Nodes))
			}
			// The 18 count hashes, known: and the markers spread over the
			// slots, so more than one master takes writes, each with its
			// own flush script.
			busy := 0
			var sum int64
			for _, n := range run.Nodes {
				if n.Calls["hincrby"] > 0 {
					busy++
				}
				sum += n.LoadCalls
			}
			if busy < 2 || sum != run.LoadCalls {
				t.Errorf("pulse-cluster: %d nodes took HINCRBY, per-node load commands add up to %d of %d: %+v", busy, sum, run.LoadCalls, run.Nodes)
			}
			// A flush sends one script call per node, whatever the slots
			// it writes (each keeps its own marker inside the call): at
			// most a call per node per flush (and the EVAL that loads the
			// script on each), whatever the request count.
			flushes := run.Calls["eval"] + run.Calls["evalsha"]
			if flushes < 1 || flushes > 3*(maxFlushes(runTime)+1) {
				t.Errorf("pulse-cluster: %d flush scripts over 3 nodes in %s", flushes, run.Load.Duration)
			}
			if n := run.Calls["hincrby"]; n < seriesPrecisions || n > 2*seriesPrecisions*flushes {
				t.Errorf("pulse-cluster: %d HINCRBY in %d flush scripts", n, flushes)
			}
		case PulseWriteThrough:
			if run.HitsInRedis != run.Server.Served {
				t.Errorf("write-through: %d hits in Redis, %d served", run.HitsInRedis, run.Server.Served)
			}
			// Each request waits for a flush that holds its hits; requests
			// arriving together share one. So at most one script per
			// request, besides the background flushes of the interval,
			// and per script one HINCRBY per series and precision (two
			// across a bucket boundary).
			flushes := run.Calls["eval"] + run.Calls["evalsha"]
			if flushes < 1 || flushes > run.Server.Served+maxFlushes(runTime) {
				t.Errorf("write-through: %d flush scripts for %d requests", flushes, run.Server.Served)
			}
			if n := run.Calls["hincrby"]; n < seriesPrecisions || n > 2*seriesPrecisions*flushes {
				t.Errorf("write-through: %d HINCRBY in %d flushes", n, flushes)
			}
		}
	}
	if !strings.Contains(progress.String(), "round 1 pulse") {
		t.Errorf("progress: %q", progress.String())
	}
	text := rep.Text()
	if !regexp.MustCompile(`\npulse/bare throughput ratio: \d+\.\d\d\n$`).MatchString(text) {
		t.Errorf("report does not end with the ratio line:\n%s", text)
	}
	md := rep.Markdown("make bench", "")
	for _, want := range []string{"| pulse |", "| echoprometheus |", "| pulse-write-through |", "| pulse-cluster |",
		"| pulse-cluster | c=1, 1ms pause |", "(extra run) |", "pulse-cluster/bare throughput ratio:", "pulse/bare throughput ratio:"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestCheck(t *testing.T) {
	served := func(v Variant, served, hits int64) RunResult {
		return RunResult{Variant: v, Server: ServerReport{Served: served}, HitsInRedis: hits, Load: LoadResult{Requests: served}}
	}
	tests := []struct {
		name string
		run  RunResult
		want string // substring of the failure; "" for none
	}{
		{"pulse exact", served(Pulse, 100, 100), ""},
		{"pulse lost hits", served(Pulse, 100, 99), "hits in Redis 99 != requests served 100"},
		{"write-through counted twice", served(PulseWriteThrough, 100, 101), "hits in Redis 101 != requests served 100"},
		{"cluster exact", served(PulseCluster, 100, 100), ""},
		{"cluster lost hits", served(PulseCluster, 100, 97), "hits in Redis 97 != requests served 100"},
		{"pending after close", func() RunResult {
			r := served(Pulse, 10, 10)
			r.Server.PendingHits = 3
			return r
		}(), "pending 3"},
		{"bare writes nothing", served(Bare, 100, 0), ""},
		{"bare with hits", served(Bare, 100, 5), "5 hits in Redis from a variant that records none"},
		{"client saw more than served", func() RunResult {
			r := served(EchoPrometheus, 10, 0)
			r.Load.Requests = 11
			return r
		}(), "server served 10 < 11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := check(tt.run)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("check = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseWrk(t *testing.T) {
	const out = `Running 1s test @ http://127.0.0.1:34943/posts/42
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.85ms    9.57ms  73.65ms   94.04%
    Req/Sec    17.29k     7.88k   28.33k    63.64%
  Latency Distribution
     50%  123.00us
     75%  456.00us
     90%    5.41ms
     99%   58.57ms
  18957 requests in 1.10s, 2.17MB read
  Socket errors: connect 0, read 2, write 1, timeout 3
  Non-2xx or 3xx responses: 4
Requests/sec:  17222.58
Transfer/sec:      1.97MB
`
	got, err := ParseWrk(out)
	if err != nil {
		t.Fatal(err)
	}
	want := LoadResult{Requests: 18957, Duration: 1100 * time.Millisecond, RPS: 17222.58,
		P50: 123 * time.Microsecond, P99: 58570 * time.Microsecond, Errors: 10}
	if got != want {
		t.Errorf("ParseWrk = %+v, want %+v", got, want)
	}
	for _, bad := range []string{
		"",
		strings.Replace(out, "Requests/sec:", "Requests:", 1),
		strings.Replace(out, "     99%   58.57ms\n", "", 1),
		strings.Replace(out, "123.00us", "123.00xs", 1),
	} {
		if _, err := ParseWrk(bad); err == nil {
			t.Errorf("ParseWrk accepted %q", bad)
		}
	}
}

func TestParseWrkTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"812.00us", 812 * time.Microsecond},
		{"1.25ms", 1250 * time.Microsecond},
		{"6.00s", 6 * time.Second},
		{"1.50m", 90 * time.Second},
	}
	for _, tt := range tests {
		if got, err := parseWrkTime(tt.in); err != nil || got != tt.want {
			t.Errorf("parseWrkTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestGoBench(t *testing.T) {
	const out = `goos: linux
pkg: github.com/pulse-dev/pulse/pulseecho
cpu: Some CPU
BenchmarkMiddleware/bare-2         	22012939	       100.0 ns/op	       8 B/op	       1 allocs/op
BenchmarkMiddleware/bare-2         	24157746	        80.0 ns/op	       8 B/op	       1 allocs/op
BenchmarkMiddleware/bare-2         	24157746	        90.0 ns/op	       8 B/op	       1 allocs/op
BenchmarkMiddleware/pulse-hits-2   	 9149827	       190.0 ns/op	      32 B/op	       2 allocs/op
PASS
pkg: github.com/pulse-dev/pulse/timeseries
BenchmarkRecord/serial-2         	38623468	        29.38 ns/op	       0 B/op	       0 allocs/op
BenchmarkPlain	1000	1500 ns/op
`
	if cpu := goBenchCPU(out); cpu != "Some CPU" {
		t.Errorf("cpu = %q", cpu)
	}
	bs := ParseGoBench(out)
	if len(bs) != 4 {
		t.Fatalf("parsed %+v", bs)
	}
	if b := bs[0]; b.Name != "BenchmarkMiddleware/bare" || b.Procs != 2 || b.NsPerOp != 90 || b.Runs != 3 || b.AllocsPerOp != 1 {
		t.Errorf("bare = %+v, want the median of three runs", b)
	}
	if b := bs[2]; b.Pkg != "github.com/pulse-dev/pulse/timeseries" || b.NsPerOp != 29.38 {
		t.Errorf("record = %+v", b)
	}
	md := GoBenchTable(bs).markdown()
	if !strings.Contains(md, "| pulseecho | BenchmarkMiddleware/pulse-hits-2 | 190 | 32 | 2 | +100 ns, +1 allocs (× 2.11) |") {
		t.Errorf("no difference over bare in:\n%s", md)
	}
	if !strings.Contains(md, "| timeseries | BenchmarkPlain | 1500 | 0 | 0 |  |") {
		t.Errorf("a benchmark without -benchmem or procs suffix is missing:\n%s", md)
	}
}

func TestSplice(t *testing.T) {
	doc := "# Benchmarks\n\nintro\n\n" + BeginMarker + "\n\nold\n\n" + EndMarker + "\n\n## Why\n\nanalysis\n"
	got := Splice(doc, "new table")
	want := "# Benchmarks\n\nintro\n\n" + BeginMarker + "\n\nnew table\n\n" + EndMarker + "\n\n## Why\n\nanalysis\n"
	if got != want {
		t.Errorf("Splice =\n%s\nwant\n%s", got, want)
	}
	if again := Splice(got, "new table"); again != got {
		t.Errorf("Splice is not idempotent:\n%s", again)
	}
	if got := Splice("# Benchmarks", "t"); got != "# Benchmarks\n\n"+BeginMarker+"\n\nt\n\n"+EndMarker+"\n" {
		t.Errorf("Splice without markers = %q", got)
	}
}

// TestCommandStatsDelta checks the INFO arithmetic against commands whose
// count is known, one of them a script running two more.
func TestCommandStatsDelta(t *testing.T) {
	srv := redistest.Start(t)
	conn, err := dialRedis(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	before, err := readStats(conn)
	if err != nil {
		t.Fatal(err)
	}
	other, err := dialRedis(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for range 3 {
		if _, err := other.Do("HINCRBY", "h", "f", 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.Do("EVAL", "redis.call('ZADD', KEYS[1], 0, 'm'); return redis.call('HINCRBY', KEYS[2], 'f', 1)", 2, "z", "h"); err != nil {
		t.Fatal(err)
	}
	after, err := readStats(conn)
	if err != nil {
		t.Fatal(err)
	}
	processed, calls := delta(before, after)
	want := map[string]int64{"hincrby": 4, "zadd": 1, "eval": 1}
	if len(calls) != len(want) {
		t.Errorf("calls = %v, want %v", calls, want)
	}
	for name, n := range want {
		if calls[name] != n {
			t.Errorf("calls = %v, want %v", calls, want)
		}
	}
	// Redis 7 counts a script's commands in total_commands_processed too;
	// older servers count the script once.
	if processed != 6 && processed != 4 {
		t.Errorf("processed = %d, want 6 (or 4 before Redis 7)", processed)
	}
	if after.CPU < before.CPU {
		t.Errorf("Redis CPU went back: %v then %v", before.CPU, after.CPU)
	}
}

func TestAddNode(t *testing.T) {
	snap := func(processed int64, cpu time.Duration, calls map[string]int64) CommandStats {
		return CommandStats{Processed: processed, CPU: cpu, Calls: calls}
	}
	// The server starts (its script loaded and a first flush in the
	// warm-up), the measured load sees two flushes, Close one more.
	before := snap(100, 0, map[string]int64{"info": 5, "flushall": 1})
	start := snap(108, 5*time.Millisecond, map[string]int64{"info": 6, "flushall": 1, "eval": 1, "hincrby": 4, "get": 1, "set": 1})
	end := snap(151, 12*time.Millisecond, map[string]int64{"info": 7, "flushall": 1, "eval": 1, "evalsha": 2, "hincrby": 40, "get": 3, "set": 3})
	after := snap(173, 20*time.Millisecond, map[string]int64{"info": 8, "flushall": 1, "eval": 1, "evalsha": 3, "hincrby": 58, "get": 4, "set": 4})
	var r RunResult
	r.addNode("a", before, start, end, after)
	want := map[string]int64{"eval": 1, "evalsha": 3, "hincrby": 58, "get": 4, "set": 4}
	if !maps.Equal(r.Calls, want) {
		t.Errorf("calls = %v, want %v", r.Calls, want)
	}
	// Each window holds the INFO that opened it, and nothing else of ours;
	// the load's commands and CPU are the measured window's only.
	if r.Processed != 70 || r.CallsTotal != 70 || r.LoadCalls != 42 {
		t.Errorf("processed %d, calls %d, under load %d; want 70, 70, 42", r.Processed, r.CallsTotal, r.LoadCalls)
	}
	if r.RedisCPU != 7*time.Millisecond {
		t.Errorf("Redis CPU %v, want the measured window's 7ms", r.RedisCPU)
	}
	if end.Calls["evalsha"] != 2 {
		t.Errorf("addNode changed its input: %v", end.Calls)
	}
	// A second node adds to the run's sums and keeps its own figures.
	r.addNode("b", snap(0, 0, map[string]int64{"info": 1}), snap(1, 0, map[string]int64{"info": 2}),
		snap(6, time.Millisecond, map[string]int64{"info": 3, "evalsha": 1, "hincrby": 3}),
		snap(7, time.Millisecond, map[string]int64{"info": 4, "evalsha": 1, "hincrby": 3}))
	if r.Calls["hincrby"] != 61 || r.CallsTotal != 74 || r.LoadCalls != 46 || r.Processed != 74 || r.RedisCPU != 8*time.Millisecond {
		t.Errorf("after node b: calls %v, total %d, under load %d, processed %d, CPU %v; want hincrby 61, 74, 46, 74, 8ms",
			r.Calls, r.CallsTotal, r.LoadCalls, r.Processed, r.RedisCPU)
	}
	if len(r.Nodes) != 2 || r.Nodes[1].Addr != "b" || r.Nodes[1].LoadCalls != 4 || r.Nodes[0].LoadCalls != 42 {
		t.Errorf("nodes = %+v", r.Nodes)
	}
	r.Load.Duration = 2 * time.Second
	if got := r.NodeCommandsPerSecond(); len(got) != 2 || got[0] != 21 || got[1] != 2 {
		t.Errorf("NodeCommandsPerSecond = %v, want [21 2]", got)
	}
}

// TestStartRedis checks the server make bench starts for itself: private
// port, no persistence, gone with its directory after Stop.
func TestStartRedis(t *testing.T) {
	srv, err := StartRedis(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	conn, err := srv.dial()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := redis.StringMap(conn.Do("CONFIG", "GET", "appendonly"))
	conn.Close()
	if err != nil || cfg["appendonly"] != "no" {
		t.Errorf("appendonly = %v, %v", cfg, err)
	}
	srv.Stop()
	if _, err := os.Stat(srv.Dir); !os.IsNotExist(err) {
		t.Errorf("directory %s left behind: %v", srv.Dir, err)
	}
	if c, err := net.DialTimeout("tcp", srv.Addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Stop", srv.Addr)
	}
}

// TestStartCluster checks the cluster make bench starts for itself: three
// masters on ports whose bus ports are valid, serving every slot, no
// persistence, gone with their directories after Stop.
func TestStartCluster(t *testing.T) {
	c, err := StartCluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	if len(c.Nodes) != 3 {
		t.Fatalf("%d nodes", len(c.Nodes))
	}
	for _, s := range c.Nodes {
		_, port, _ := net.SplitHostPort(s.Addr)
		if p, _ := strconv.Atoi(port); p <= 0 || p >= ports.Max {
			t.Errorf("node port %s: its bus port would be past 65535", port)
		}
		conn, err := s.dial()
		if err != nil {
			t.Fatal(err)
		}
		info, err := redis.String(conn.Do("CLUSTER", "INFO"))
		cfg, cfgErr := redis.StringMap(conn.Do("CONFIG", "GET", "appendonly"))
		conn.Close()
		if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_assigned:16384") || !strings.Contains(info, "cluster_size:3") {
			t.Errorf("%s: CLUSTER INFO %q, %v", s.Addr, info, err)
		}
		if cfgErr != nil || cfg["appendonly"] != "no" {
			t.Errorf("%s: appendonly = %v, %v", s.Addr, cfg, cfgErr)
		}
	}
	// A client seeded with one node finds the others, and a key lands.
	cl, err := newCluster(c.Addrs()[:1])
	if err != nil {
		t.Fatal(err)
	}
	conn, err := redisc.RetryConn(cl.Get(), 3, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a", "b", "c", hitsKey} {
		if _, err := conn.Do("HINCRBY", key, "f", 1); err != nil {
			t.Errorf("HINCRBY %s: %v", key, err)
		}
	}
	conn.Close()
	cl.Close()
	c.Stop()
	for _, s := range c.Nodes {
		if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
			t.Errorf("directory %s left behind: %v", s.Dir, err)
		}
	}
}

func TestServeRejectsBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"-variant", "nginx"},
		{"-variant", "pulse"},         // no -redis
		{"-variant", "pulse-cluster"}, // no -cluster
		{"-nosuchflag"},
	} {
		var out bytes.Buffer
		if err := Serve(context.Background(), args, &out); err == nil {
			t.Errorf("Serve(%q) = nil", args)
		}
		if out.Len() != 0 {
			t.Errorf("Serve(%q) printed %q", args, out.String())
		}
	}
}

// TestWrkPaced runs the real wrk, paced by its Lua delay script, against
// a bare server in this process.
func TestWrkPaced(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("wrk not installed; `make bench` installs it")
	}
	a, err := newApp(Bare, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.handler)
	defer srv.Close()
	res, err := Wrk{Threads: 1}.Load(context.Background(), srv.URL+Path, LoadSpec{Connections: 2, Duration: time.Second, Pause: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Two connections each waiting 5 ms between requests: at most 400/s.
	if res.Requests == 0 || res.RPS > 420 || res.P50 <= 0 || res.Errors != 0 {
		t.Errorf("paced wrk: %+v", res)
	}
	if got := a.served.Load(); got < res.Requests {
		t.Errorf("server served %d, wrk got %d responses", got, res.Requests)
	}
}

// TestSetRatiosPerFramework: each Pulse variant is compared with its own
// framework's bare server in the same round, never another framework's.
func TestSetRatiosPerFramework(t *testing.T) {
	run := func(v Variant, round int, rps float64) RunResult {
		return RunResult{Variant: v, Round: round, Load: LoadResult{RPS: rps}}
	}
	runs := []RunResult{
		run(Bare, 1, 1000), run(Pulse, 1, 970),
		run(BareV5, 1, 2000), run(PulseV5, 1, 1900),
		run(BareHTTP, 1, 4000), run(PulseHTTP, 1, 3000),
		run(Bare, 2, 500), run(PulseHTTP, 2, 100), // round 2 has no bare-http
		run(Pulse, 0, 900), // an extra run: no ratio
	}
	setRatios(runs)
	want := []float64{1, 0.97, 1, 0.95, 1, 0.75, 1, 0, 0}
	for i, r := range runs {
		if r.RatioToBare != want[i] {
			t.Errorf("%s round %d: ratio %.3f, want %.3f", r.Variant, r.Round, r.RatioToBare, want[i])
		}
	}
}

// maxFlushes bounds the background flushes of a server loaded for d:
// one per FlushInterval of the test's options, plus the one before the
// load starts and the one after it ends.
func maxFlushes(d time.Duration) int64 {
	return int64(d/testFlushInterval) + 2
}
