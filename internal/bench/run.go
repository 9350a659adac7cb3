package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"
)

// Config is one comparison. Zero fields take the defaults.
type Config struct {
	// Variants run in every round, rotated by one each round so none
	// always runs first (default: all of Variants).
	Variants []Variant
	// Rounds is how many times each variant runs (default 20).
	Rounds int
	// Duration is the length of every run in the rounds (default 1 s:
	// short runs, many rounds, so the runs compared in one round are
	// close in time).
	Duration time.Duration
	// Connections is the load's keep-alive connection count (default 32).
	Connections int
	// ScaleConnections are extra runs of the Pulse variant (and of
	// pulse-cluster, when it is one of Variants) after the rounds, at
	// these connection counts with each connection pausing ScalePause
	// between requests, then one more at Connections without pauses:
	// request rates far apart, to show the Redis commands per second do
	// not follow the request rate. None when empty.
	ScaleConnections []int
	// ScalePause is the pause of the paced extra runs (default 1 ms).
	ScalePause time.Duration
	// ScaleDuration is the length of every extra run (default 5 s: long
	// enough for several flushes).
	ScaleDuration time.Duration
	// GOMAXPROCS is the server process's; 0 leaves the runtime's default.
	GOMAXPROCS int
	// FlushInterval is the Pulse recorder's; 0 leaves its default (1 s).
	FlushInterval time.Duration
	// Loader sends the requests (default Wrk{Threads: 1}).
	Loader Loader
	// ServerCommand returns the command that runs Serve(args) in a new
	// process; required.
	ServerCommand func(args []string) *exec.Cmd
	// RedisAddr is a Redis this run owns and may flush; "" starts one
	// with StartRedis for the length of the run.
	RedisAddr string
	// ClusterAddrs are the master nodes of a Redis Cluster this run owns
	// and may flush, for pulse-cluster; none starts one with
	// StartCluster for the length of the run, when pulse-cluster runs.
	ClusterAddrs []string
	// Progress receives a line per run; nil discards them.
	Progress io.Writer
}

func (c Config) withDefaults() (Config, error) {
	if c.ServerCommand == nil {
		return c, errors.New("bench: Config.ServerCommand is nil")
	}
	if len(c.Variants) == 0 {
		c.Variants = Variants
	}
	for _, v := range c.Variants {
		if !v.valid() {
			return c, fmt.Errorf("bench: unknown variant %q", v)
		}
	}
	if c.Rounds <= 0 {
		c.Rounds = 20
	}
	if c.Duration <= 0 {
		c.Duration = time.Second
	}
	if c.Connections <= 0 {
		c.Connections = 32
	}
	if c.ScalePause <= 0 {
		c.ScalePause = time.Millisecond
	}
	if c.ScaleDuration <= 0 {
		c.ScaleDuration = 5 * time.Second
	}
	if c.Loader == nil {
		c.Loader = Wrk{Threads: 1}
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c, nil
}

// RunResult is one server process under one load.
type RunResult struct {
	Round       int // from 1; 0 for the extra runs
	Variant     Variant
	Connections int
	Pause       time.Duration // each connection's pause between requests
	Load        LoadResult
	Server      ServerReport
	// HitsInRedis is the sum of count:86400:hits after the server exited,
	// read through the cluster client for pulse-cluster.
	HitsInRedis int64
	// Processed, Calls, CallsTotal and LoadCalls are the sums over Nodes
	// (see NodeResult).
	Processed  int64
	Calls      map[string]int64
	CallsTotal int64
	LoadCalls  int64
	// Nodes are the Redis servers of the run, each with its own command
	// counts: the one server, or the three masters for pulse-cluster.
	Nodes []NodeResult
	// ServerCPU and RedisCPU are the CPU time the server process and
	// Redis (every node) used during the run: a cost per request that
	// other processes on the machine disturb far less than throughput.
	ServerCPU, RedisCPU time.Duration
	// RatioToBare is this run's requests per second over bare's in the
	// same round, CPURatioToBare its CPU time per request (server and
	// Redis) over bare's; 0 when the round has no bare run.
	RatioToBare, CPURatioToBare float64
	// Failure says why the run's count check failed; "" when it passed.
	Failure string
	// ServerLog is what the server process wrote to stderr, e.g. a
	// recorder's flush error.
	ServerLog string
}

// CPUPerRequest is the CPU time the server and Redis used per request
// served.
func (r RunResult) CPUPerRequest() (server, redis time.Duration) {
	if r.Server.Served == 0 {
		return 0, 0
	}
	return r.ServerCPU / time.Duration(r.Server.Served), r.RedisCPU / time.Duration(r.Server.Served)
}

// ServerCores is the server's CPU time over the load's duration: how
// many cores it kept busy. Near GOMAXPROCS the server was the bottleneck;
// well below, the client or other processes were.
func (r RunResult) ServerCores() float64 {
	if r.Load.Duration <= 0 {
		return 0
	}
	return r.ServerCPU.Seconds() / r.Load.Duration.Seconds()
}

// ClientCores is the load generator's CPU time over the load's duration;
// near its thread count, the client was the bottleneck.
func (r RunResult) ClientCores() float64 {
	if r.Load.Duration <= 0 {
		return 0
	}
	return r.Load.ClientCPU.Seconds() / r.Load.Duration.Seconds()
}

// CommandsPerSecond is the commands Redis ran, scripts' included, per
// second while the load ran; on a cluster, all nodes together.
func (r RunResult) CommandsPerSecond() float64 {
	return perSecond(r.LoadCalls, r.Load.Duration)
}

// NodeCommandsPerSecond is CommandsPerSecond of each of Nodes.
func (r RunResult) NodeCommandsPerSecond() []float64 {
	out := make([]float64, len(r.Nodes))
	for i, n := range r.Nodes {
		out[i] = perSecond(n.LoadCalls, r.Load.Duration)
	}
	return out
}

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// NodeResult is what one Redis server ran during a run.
type NodeResult struct {
	Addr string
	// Processed is INFO stats total_commands_processed over the whole
	// run, from server start to exit (Redis 7 counts the commands a
	// script runs as well as the script); Calls is INFO commandstats, the
	// commands Redis ran by name, scripts' included, and CallsTotal their
	// sum. LoadCalls is CallsTotal while the load ran, without the flush
	// at Close.
	Processed  int64
	Calls      map[string]int64
	CallsTotal int64
	LoadCalls  int64
	// CPU is the node's used_cpu_* over the run.
	CPU time.Duration
}

// Report is a whole comparison.
type Report struct {
	Config  Config
	Machine Machine
	Runs    []RunResult
	Started time.Time
	Elapsed time.Duration
}

// Failed returns the count checks that failed, nil when all passed.
func (r *Report) Failed() error {
	var errs []error
	for _, run := range r.Runs {
		if run.Failure != "" {
			round := "extra run"
			if run.Round > 0 {
				round = "round " + strconv.Itoa(run.Round)
			}
			errs = append(errs, fmt.Errorf("bench: %s, %s at %s: %s", round, run.Variant, loadLabel(run.Connections, run.Pause), run.Failure))
		}
	}
	return errors.Join(errs...)
}

// Run runs the comparison. A failed count check does not stop it: it is
// recorded in the run and reported by Report.Failed.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	rep := &Report{Config: cfg, Started: time.Now()}
	rep.Machine = ReadMachine()
	if cfg.RedisAddr == "" {
		srv, err := StartRedis(ctx)
		if err != nil {
			return nil, err
		}
		defer srv.Stop()
		cfg.RedisAddr = srv.Addr
	}
	single, err := newSingleTarget(cfg.RedisAddr)
	if err != nil {
		return nil, err
	}
	defer single.close()
	targets := map[bool]*target{false: single}
	if slices.Contains(cfg.Variants, PulseCluster) {
		if len(cfg.ClusterAddrs) == 0 {
			cluster, err := StartCluster(ctx)
			if err != nil {
				return nil, err
			}
			defer cluster.Stop()
			cfg.ClusterAddrs = cluster.Addrs()
		}
		t, err := newClusterTarget(cfg.ClusterAddrs)
		if err != nil {
			return nil, err
		}
		defer t.close()
		targets[true] = t
	}

	for round := 1; round <= cfg.Rounds; round++ {
		for i := range cfg.Variants {
			v := cfg.Variants[(i+round-1)%len(cfg.Variants)]
			res, err := runOne(ctx, cfg, targets[v.clustered()], v, LoadSpec{Connections: cfg.Connections, Duration: cfg.Duration})
			if err != nil {
				return nil, err
			}
			res.Round = round
			rep.Runs = append(rep.Runs, res)
			fmt.Fprintln(cfg.Progress, progressLine(res))
		}
	}
	var extra []LoadSpec
	for _, n := range cfg.ScaleConnections {
		extra = append(extra, LoadSpec{Connections: n, Duration: cfg.ScaleDuration, Pause: cfg.ScalePause})
	}
	if len(extra) > 0 {
		extra = append(extra, LoadSpec{Connections: cfg.Connections, Duration: cfg.ScaleDuration})
	}
	scaled := []Variant{Pulse}
	if slices.Contains(cfg.Variants, PulseCluster) {
		scaled = append(scaled, PulseCluster)
	}
	for _, spec := range extra {
		for _, v := range scaled {
			res, err := runOne(ctx, cfg, targets[v.clustered()], v, spec)
			if err != nil {
				return nil, err
			}
			rep.Runs = append(rep.Runs, res)
			fmt.Fprintln(cfg.Progress, progressLine(res))
		}
	}
	setRatios(rep.Runs)
	rep.Elapsed = time.Since(rep.Started)
	rep.Machine.LoadAfter = loadAverage()
	return rep, nil
}

func progressLine(r RunResult) string {
	round := "extra"
	if r.Round > 0 {
		round = "round " + strconv.Itoa(r.Round)
	}
	perNode := ""
	if len(r.Nodes) > 1 {
		perNode = "  per node cmds/s " + fmtRates(r.NodeCommandsPerSecond())
	}
	line := fmt.Sprintf("bench: %s %-19s %-16s %8.0f req/s  p50 %-9s p99 %-9s served %d  hits %d  redis cmds %d%s%s",
		round, r.Variant, loadLabel(r.Connections, r.Pause), r.Load.RPS, fmtDur(r.Load.P50), fmtDur(r.Load.P99),
		r.Server.Served, r.HitsInRedis, r.CallsTotal, perNode, failureSuffix(r))
	if log := strings.TrimSpace(r.ServerLog); log != "" {
		line += "\n  server stderr: " + strings.ReplaceAll(log, "\n", "\n  server stderr: ")
	}
	return line
}

func failureSuffix(r RunResult) string {
	if r.Failure == "" {
		return ""
	}
	return "  FAILED: " + r.Failure
}

// setRatios fills the ratios to the same framework's bare run of the
// same round.
func setRatios(runs []RunResult) {
	type roundBare struct {
		round int
		bare  Variant
	}
	bare := map[roundBare]RunResult{}
	for _, r := range runs {
		if r.Round > 0 && r.Variant.isBare() {
			bare[roundBare{r.Round, r.Variant}] = r
		}
	}
	for i := range runs {
		b, ok := bare[roundBare{runs[i].Round, runs[i].Variant.bare()}]
		if !ok || runs[i].Round == 0 {
			continue
		}
		if b.Load.RPS > 0 {
			runs[i].RatioToBare = runs[i].Load.RPS / b.Load.RPS
		}
		if bc := b.cpuPerRequest(); bc > 0 {
			runs[i].CPURatioToBare = float64(runs[i].cpuPerRequest()) / float64(bc)
		}
	}
}

func (r RunResult) cpuPerRequest() time.Duration {
	server, redis := r.CPUPerRequest()
	return server + redis
}

// target is the Redis a variant writes to: the single server, or every
// master of the cluster. The run owns it and empties it before each run.
type target struct {
	addrs []string
	conns []redis.Conn // one per node, for FLUSHALL and INFO
	hits  func() (int64, error)
	free  func()
}

func newSingleTarget(addr string) (*target, error) {
	conn, err := dialRedis(addr)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return &target{
		addrs: []string{addr},
		conns: []redis.Conn{conn},
		hits:  func() (int64, error) { return hashSum(conn, hitsKey) },
		free:  func() {},
	}, nil
}

// newClusterTarget connects to each node for its own counters, and reads
// the hits through a cluster client, as an app would.
func newClusterTarget(addrs []string) (*target, error) {
	t := &target{addrs: addrs, free: func() {}}
	for _, addr := range addrs {
		conn, err := dialRedis(addr)
		if err != nil {
			t.close()
			return nil, fmt.Errorf("bench: %w", err)
		}
		t.conns = append(t.conns, conn)
	}
	cluster, err := newCluster(addrs)
	if err != nil {
		t.close()
		return nil, err
	}
	t.free = func() { cluster.Close() }
	t.hits = func() (int64, error) {
		conn, err := redisc.RetryConn(cluster.Get(), 3, 100*time.Millisecond)
		if err != nil {
			return 0, fmt.Errorf("bench: cluster: %w", err)
		}
		defer conn.Close()
		return hashSum(conn, hitsKey)
	}
	return t, nil
}

func (t *target) close() {
	for _, c := range t.conns {
		c.Close()
	}
	t.free()
}

// readStats reads every node's counters.
func (t *target) readStats() ([]CommandStats, error) {
	out := make([]CommandStats, len(t.conns))
	for i, c := range t.conns {
		st, err := readStats(c)
		if err != nil {
			return nil, fmt.Errorf("%w (%s)", err, t.addrs[i])
		}
		out[i] = st
	}
	return out, nil
}

// hitsKey holds the daily hits, whose sum over the run's one bucket (or
// two, across midnight) is every hit recorded.
const hitsKey = "count:86400:hits"

// runOne starts a server process for v on an empty Redis, loads it, stops
// it and checks what it recorded.
func runOne(ctx context.Context, cfg Config, t *target, v Variant, spec LoadSpec) (RunResult, error) {
	res := RunResult{Variant: v, Connections: spec.Connections, Pause: spec.Pause}
	// Only ever servers this run started or was handed as its own. On a
	// cluster FLUSHALL empties the node it is sent to, so each master.
	for i, c := range t.conns {
		if _, err := c.Do("FLUSHALL"); err != nil {
			return res, fmt.Errorf("bench: FLUSHALL %s: %w", t.addrs[i], err)
		}
	}
	before, err := t.readStats()
	if err != nil {
		return res, err
	}
	srv, err := startServer(ctx, cfg, v)
	if err != nil {
		return res, err
	}
	load, loadErr := cfg.Loader.Load(ctx, "http://"+srv.addr+Path, spec)
	mid, midErr := t.readStats()
	report, stopErr := srv.stop()
	if loadErr != nil {
		return res, fmt.Errorf("bench: %s: %w", v, loadErr)
	}
	if midErr != nil {
		return res, midErr
	}
	if stopErr != nil {
		return res, fmt.Errorf("bench: %s: %w", v, stopErr)
	}
	res.Load, res.Server = load, report
	res.ServerLog = srv.stderr.String()
	after, err := t.readStats()
	if err != nil {
		return res, err
	}
	for i := range t.conns {
		res.addNode(t.addrs[i], before[i], mid[i], after[i])
	}
	res.ServerCPU = srv.cpu
	if res.HitsInRedis, err = t.hits(); err != nil {
		return res, err
	}
	res.Failure = check(res)
	return res, nil
}

// addNode adds a node's figures from three snapshots: before the server
// started, when the load ended, after the server exited.
func (r *RunResult) addNode(addr string, before, mid, after CommandStats) {
	// Two windows, each opened by one INFO that counts in it.
	loadProcessed, loadCalls := delta(before, mid)
	closeProcessed, closeCalls := delta(mid, after)
	n := NodeResult{Addr: addr, Processed: loadProcessed + closeProcessed, Calls: map[string]int64{}, CPU: after.CPU - before.CPU}
	for name, c := range loadCalls {
		n.Calls[name] += c
		n.LoadCalls += c
	}
	for name, c := range closeCalls {
		n.Calls[name] += c
	}
	for _, c := range n.Calls {
		n.CallsTotal += c
	}
	r.Nodes = append(r.Nodes, n)
	if r.Calls == nil {
		r.Calls = map[string]int64{}
	}
	for name, c := range n.Calls {
		r.Calls[name] += c
	}
	r.Processed += n.Processed
	r.CallsTotal += n.CallsTotal
	r.LoadCalls += n.LoadCalls
	r.RedisCPU += n.CPU
}

// check compares what Redis holds with what the server served.
func check(r RunResult) string {
	var problems []string
	if r.Variant.records() {
		if r.HitsInRedis != r.Server.Served {
			problems = append(problems, fmt.Sprintf("hits in Redis %d != requests served %d", r.HitsInRedis, r.Server.Served))
		}
		if r.Server.PendingHits != 0 || r.Server.DroppedHits != 0 || r.Server.CloseError != "" {
			problems = append(problems, fmt.Sprintf("recorder after Close: pending %d, dropped %d, error %q",
				r.Server.PendingHits, r.Server.DroppedHits, r.Server.CloseError))
		}
	} else if r.HitsInRedis != 0 {
		problems = append(problems, fmt.Sprintf("%d hits in Redis from a variant that records none", r.HitsInRedis))
	}
	if r.Server.Served < r.Load.Requests {
		problems = append(problems, fmt.Sprintf("server served %d < %d responses the client got", r.Server.Served, r.Load.Requests))
	}
	return strings.Join(problems, "; ")
}

func hashSum(conn redis.Conn, key string) (int64, error) {
	m, err := redis.Int64Map(conn.Do("HGETALL", key))
	if err != nil {
		return 0, fmt.Errorf("bench: HGETALL %s: %w", key, err)
	}
	var sum int64
	for _, n := range m {
		sum += n
	}
	return sum, nil
}

// serverProcess is one running Serve process.
type serverProcess struct {
	cmd    *exec.Cmd
	addr   string
	stdout *bufio.Reader
	stderr *bytes.Buffer
	done   chan error // Wait's result, after stdout is read to the end
	rest   []byte     // stdout after the listening line
	cpu    time.Duration
}

func startServer(ctx context.Context, cfg Config, v Variant) (*serverProcess, error) {
	args := []string{"-variant", string(v), "-flush-interval", cfg.FlushInterval.String()}
	if v.clustered() {
		args = append(args, "-cluster", strings.Join(cfg.ClusterAddrs, ","))
	} else {
		args = append(args, "-redis", cfg.RedisAddr)
	}
	cmd := cfg.ServerCommand(args)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	if cfg.GOMAXPROCS > 0 {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(cfg.GOMAXPROCS))
	}
	// Dies with the benchmark if the benchmark dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: server: %w", err)
	}
	p := &serverProcess{cmd: cmd, stdout: bufio.NewReader(pipe), stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start server: %w", err)
	}
	listening := make(chan error, 1)
	go func() {
		addr, err := readListening(p.stdout)
		p.addr = addr
		listening <- err
		if err != nil {
			p.done <- cmd.Wait()
			return
		}
		p.rest, _ = io.ReadAll(p.stdout)
		p.done <- cmd.Wait()
	}()
	select {
	case err = <-listening:
	case <-ctx.Done():
		err = ctx.Err()
	case <-time.After(30 * time.Second):
		err = errors.New("no listening line within 30 s")
	}
	if err != nil {
		_ = cmd.Process.Kill()
		<-p.done
		return nil, fmt.Errorf("bench: server %s: %w: %s", v, err, p.stderr.String())
	}
	return p, nil
}

// stop sends SIGTERM and reads the server's report.
func (p *serverProcess) stop() (ServerReport, error) {
	var rep ServerReport
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-p.done:
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return rep, fmt.Errorf("server did not exit within 60 s of SIGTERM: %s", p.stderr.String())
	}
	if err != nil {
		return rep, fmt.Errorf("server: %w: %s", err, p.stderr.String())
	}
	if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		p.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if err := json.Unmarshal(bytes.TrimSpace(p.rest), &rep); err != nil {
		return rep, fmt.Errorf("server report %q: %w", p.rest, err)
	}
	return rep, nil
}

// median of xs; 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
