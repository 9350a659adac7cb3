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
	// ScaleConnections are extra runs of the Pulse variant after the
	// rounds, at these connection counts with each connection pausing
	// ScalePause between requests, then one more at Connections without
	// pauses: request rates far apart, to show the Redis commands per
	// second do not follow the request rate. None when empty.
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
	// HitsInRedis is the sum of count:86400:hits after the server exited.
	HitsInRedis int64
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
	// ServerCPU and RedisCPU are the CPU time the server process and
	// Redis used during the run: a cost per request that other processes
	// on the machine disturb far less than throughput.
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
// second while the load ran.
func (r RunResult) CommandsPerSecond() float64 {
	if r.Load.Duration <= 0 {
		return 0
	}
	return float64(r.LoadCalls) / r.Load.Duration.Seconds()
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
	conn, err := dialRedis(cfg.RedisAddr)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer conn.Close()

	for round := 1; round <= cfg.Rounds; round++ {
		for i := range cfg.Variants {
			v := cfg.Variants[(i+round-1)%len(cfg.Variants)]
			res, err := runOne(ctx, cfg, conn, v, LoadSpec{Connections: cfg.Connections, Duration: cfg.Duration})
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
	for _, spec := range extra {
		res, err := runOne(ctx, cfg, conn, Pulse, spec)
		if err != nil {
			return nil, err
		}
		rep.Runs = append(rep.Runs, res)
		fmt.Fprintln(cfg.Progress, progressLine(res))
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
	line := fmt.Sprintf("bench: %s %-19s %-16s %8.0f req/s  p50 %-9s p99 %-9s served %d  hits %d  redis cmds %d%s",
		round, r.Variant, loadLabel(r.Connections, r.Pause), r.Load.RPS, fmtDur(r.Load.P50), fmtDur(r.Load.P99),
		r.Server.Served, r.HitsInRedis, r.CallsTotal, failureSuffix(r))
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

// setRatios fills the ratios to the bare run of the same round.
func setRatios(runs []RunResult) {
	bare := map[int]RunResult{}
	for _, r := range runs {
		if r.Round > 0 && r.Variant == Bare {
			bare[r.Round] = r
		}
	}
	for i := range runs {
		b, ok := bare[runs[i].Round]
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

// runOne starts a server process for v on an empty Redis, loads it, stops
// it and checks what it recorded.
func runOne(ctx context.Context, cfg Config, conn redis.Conn, v Variant, spec LoadSpec) (RunResult, error) {
	res := RunResult{Variant: v, Connections: spec.Connections, Pause: spec.Pause}
	// Only ever a server this run started or was handed as its own.
	if _, err := conn.Do("FLUSHALL"); err != nil {
		return res, fmt.Errorf("bench: FLUSHALL: %w", err)
	}
	before, err := readStats(conn)
	if err != nil {
		return res, err
	}
	srv, err := startServer(ctx, cfg, v)
	if err != nil {
		return res, err
	}
	load, loadErr := cfg.Loader.Load(ctx, "http://"+srv.addr+Path, spec)
	mid, midErr := readStats(conn)
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
	after, err := readStats(conn)
	if err != nil {
		return res, err
	}
	res.setCommands(before, mid, after)
	res.RedisCPU = after.CPU - before.CPU
	res.ServerCPU = srv.cpu
	if res.HitsInRedis, err = hashSum(conn, "count:86400:hits"); err != nil {
		return res, err
	}
	res.Failure = check(res)
	return res, nil
}

// setCommands fills the command counts from three snapshots: before the
// server started, when the load ended, after the server exited.
func (r *RunResult) setCommands(before, mid, after CommandStats) {
	// Two windows, each opened by one INFO that counts in it.
	loadProcessed, loadCalls := delta(before, mid)
	closeProcessed, closeCalls := delta(mid, after)
	r.Processed = loadProcessed + closeProcessed
	r.Calls = map[string]int64{}
	r.LoadCalls, r.CallsTotal = 0, 0
	for name, n := range loadCalls {
		r.Calls[name] += n
		r.LoadCalls += n
	}
	for name, n := range closeCalls {
		r.Calls[name] += n
	}
	for _, n := range r.Calls {
		r.CallsTotal += n
	}
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
	cmd := cfg.ServerCommand([]string{"-variant", string(v), "-redis", cfg.RedisAddr,
		"-flush-interval", cfg.FlushInterval.String()})
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
