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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"
)

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

// runOne starts a server process for v on an empty Redis, warms it up,
// loads it, stops it and checks what it recorded.
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
	w, measureErr := measure(ctx, cfg, t, srv, spec)
	report, stopErr := srv.stop()
	if measureErr != nil {
		return res, fmt.Errorf("bench: %s: %w", v, measureErr)
	}
	if stopErr != nil {
		return res, fmt.Errorf("bench: %s: %w", v, stopErr)
	}
	res.Load, res.Server, res.ServerCPU = w.load, report, w.serverCPU
	res.ServerLog = srv.stderr.String()
	after, err := t.readStats()
	if err != nil {
		return res, err
	}
	for i := range t.conns {
		res.addNode(t.addrs[i], before[i], w.start[i], w.end[i], after[i])
	}
	if res.HitsInRedis, err = t.hits(); err != nil {
		return res, err
	}
	res.Failure = check(res)
	return res, nil
}

// window is what one measured load saw: the load, the server's CPU time
// while it ran, and the Redis counters as it started and as it ended.
type window struct {
	load       LoadResult
	serverCPU  time.Duration
	start, end []CommandStats
}

// measure warms srv up for cfg.Warmup, untimed, then runs the measured
// load: a process's first moments (its heap growing from nothing, the
// recorder's first connections and scripts) are not what a request
// costs.
func measure(ctx context.Context, cfg Config, t *target, srv *serverProcess, spec LoadSpec) (window, error) {
	var w window
	url := "http://" + srv.addr + Path
	if cfg.Warmup > 0 {
		// wrk counts whole seconds; the Go client stops when told.
		if _, err := (GoClient{}).Load(ctx, url, LoadSpec{Connections: spec.Connections, Duration: cfg.Warmup}); err != nil {
			return w, fmt.Errorf("warm-up: %w", err)
		}
	}
	pid := srv.cmd.Process.Pid
	var err error
	if w.start, err = t.readStats(); err != nil {
		return w, err
	}
	cpu0, err := processCPU(pid)
	if err != nil {
		return w, err
	}
	if w.load, err = cfg.Loader.Load(ctx, url, spec); err != nil {
		return w, err
	}
	cpu1, err := processCPU(pid)
	if err != nil {
		return w, err
	}
	w.serverCPU = cpu1 - cpu0
	w.end, err = t.readStats()
	return w, err
}

// addNode adds a node's figures from four snapshots: before the server
// started, as the measured load started and ended, after the server
// exited.
func (r *RunResult) addNode(addr string, before, start, end, after CommandStats) {
	// Three windows, each opened by one INFO that counts in it.
	n := NodeResult{Addr: addr, Calls: map[string]int64{}, CPU: end.CPU - start.CPU}
	for i, w := range [][2]CommandStats{{before, start}, {start, end}, {end, after}} {
		processed, calls := delta(w[0], w[1])
		n.Processed += processed
		for name, c := range calls {
			n.Calls[name] += c
			if i == 1 { // the measured load's
				n.LoadCalls += c
			}
		}
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
	if err := json.Unmarshal(bytes.TrimSpace(p.rest), &rep); err != nil {
		return rep, fmt.Errorf("server report %q: %w", p.rest, err)
	}
	return rep, nil
}
