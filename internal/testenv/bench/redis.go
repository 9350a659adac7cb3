package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/redisinfo"
	"github.com/pulse-dev/pulse/internal/testenv/proc"
)

// RedisServer is a redis-server process started by this package: a free
// port on loopback and a temporary directory, never a server someone else
// runs.
type RedisServer struct {
	Addr string
	Dir  string
	proc *proc.Process
}

// StartRedis starts redis-server with persistence off (no RDB snapshots,
// no AOF): the benchmark measures the request path, not the disk. It
// answers PING before StartRedis returns.
func StartRedis(ctx context.Context) (*RedisServer, error) {
	return startRedis(ctx, false)
}

// startRedis starts one redis-server, a cluster node when cluster is set.
func startRedis(ctx context.Context, cluster bool) (*RedisServer, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, errors.New("bench: redis-server not found in PATH: install it (apt-get install redis-server)")
	}
	dir, err := os.MkdirTemp("", "loadbench-redis-")
	if err != nil {
		return nil, fmt.Errorf("bench: redis dir: %w", err)
	}
	p, err := proc.Start(ctx, proc.Config{
		Binary: "redis-server",
		Dir:    dir,
		Args:   func(port int) []string { return redisArgs(dir, port, cluster) },
		Ready:  pingRedis,
		// A node that lost its port leaves a nodes.conf naming it.
		BeforeRetry: func() error { return os.RemoveAll(filepath.Join(dir, "nodes.conf")) },
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("bench: %w", err)
	}
	return &RedisServer{Addr: p.Addr(), Dir: dir, proc: p}, nil
}

func redisArgs(dir string, port int, cluster bool) []string {
	args := []string{
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(port),
		"--dir", dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--protected-mode", "yes",
		"--logfile", "",
	}
	if cluster {
		// nodes.conf lands in --dir. No replicas, so the node timeout
		// only matters if a node hangs; keep it short all the same.
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "5000")
	}
	return args
}

// pingRedis is the readiness probe: PING answered.
func pingRedis(_ context.Context, port int) error {
	c, err := dialRedis(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Do("PING")
	return err
}

// Stop ends the server (SIGTERM, SIGKILL after 5 s) and removes its
// directory. It is safe to call more than once.
func (s *RedisServer) Stop() {
	s.proc.Stop()
	os.RemoveAll(s.Dir)
}

func (s *RedisServer) dial() (redis.Conn, error) { return dialRedis(s.Addr) }

func dialRedis(addr string) (redis.Conn, error) {
	return redis.Dial("tcp", addr,
		redis.DialConnectTimeout(time.Second),
		redis.DialReadTimeout(5*time.Second),
		redis.DialWriteTimeout(5*time.Second))
}

// RedisCluster is a Redis Cluster of three masters and no replicas, each a
// RedisServer of this package.
type RedisCluster struct {
	Nodes []*RedisServer
}

// clusterMasters is the node count: the fewest redis-cli accepts.
const clusterMasters = 3

// StartCluster starts three cluster nodes (persistence off, as
// StartRedis), joins them with redis-cli --cluster create and returns once
// every node reports cluster_state:ok and knows the other two.
func StartCluster(ctx context.Context) (*RedisCluster, error) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		return nil, errors.New("bench: redis-cli not found in PATH: install it (apt-get install redis-server)")
	}
	c := &RedisCluster{}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	for range clusterMasters {
		s, err := startRedis(ctx, true)
		if err != nil {
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	createCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(createCtx, "redis-cli", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("bench: redis-cli --cluster create: %w\n%s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.check()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("bench: cluster not ok after 30 s: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("bench: start cluster: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	ok = true
	return c, nil
}

// check returns why the cluster is not ready yet, or nil.
func (c *RedisCluster) check() error {
	for _, s := range c.Nodes {
		conn, err := s.dial()
		if err != nil {
			return err
		}
		info, err := redis.String(conn.Do("CLUSTER", "INFO"))
		conn.Close()
		if err != nil {
			return fmt.Errorf("%s: CLUSTER INFO: %w", s.Addr, err)
		}
		if st := redisinfo.Field(info, "cluster_state"); st != "ok" {
			return fmt.Errorf("%s: cluster_state:%s", s.Addr, st)
		}
		if n := redisinfo.Field(info, "cluster_known_nodes"); n != strconv.Itoa(len(c.Nodes)) {
			return fmt.Errorf("%s: cluster_known_nodes:%s", s.Addr, n)
		}
	}
	return nil
}

// Addrs is every node's address.
func (c *RedisCluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		addrs[i] = s.Addr
	}
	return addrs
}

// Stop stops every node and removes their directories.
func (c *RedisCluster) Stop() {
	var wg sync.WaitGroup
	for _, s := range c.Nodes {
		wg.Go(s.Stop)
	}
	wg.Wait()
}

// newCluster is a cluster client seeded with addrs, its slot map loaded:
// short timeouts, as timeseries.Config.Pool asks, and enough idle
// connections per node that a flush never dials.
func newCluster(addrs []string) (*redisc.Cluster, error) {
	c := &redisc.Cluster{
		StartupNodes: addrs,
		DialOptions: []redis.DialOption{
			redis.DialConnectTimeout(time.Second),
			redis.DialReadTimeout(2 * time.Second),
			redis.DialWriteTimeout(2 * time.Second),
		},
		CreatePool: func(addr string, opts ...redis.DialOption) (*redis.Pool, error) {
			return &redis.Pool{
				MaxIdle:     64,
				IdleTimeout: time.Minute,
				Dial:        func() (redis.Conn, error) { return redis.Dial("tcp", addr, opts...) },
			}, nil
		},
	}
	if err := c.Refresh(); err != nil {
		c.Close()
		return nil, fmt.Errorf("bench: cluster %v: %w", addrs, err)
	}
	return c, nil
}

// CommandStats is what Redis reports about the commands it ran.
type CommandStats struct {
	// Processed is INFO stats total_commands_processed.
	Processed int64
	// Calls is INFO commandstats, calls per command name, including the
	// commands a script runs.
	Calls map[string]int64
	// CPU is the CPU time Redis has used, INFO cpu used_cpu_sys plus
	// used_cpu_user.
	CPU time.Duration
}

// readStats reads the counters of the Redis at conn, with one INFO.
func readStats(conn redis.Conn) (CommandStats, error) {
	st := CommandStats{}
	text, err := redis.String(conn.Do("INFO", "all"))
	if err != nil {
		return st, fmt.Errorf("bench: INFO: %w", err)
	}
	for line := range strings.Lines(text) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "total_commands_processed":
			if st.Processed, err = strconv.ParseInt(v, 10, 64); err != nil {
				return st, fmt.Errorf("bench: INFO %s: %w", k, err)
			}
		case "used_cpu_sys", "used_cpu_user":
			secs, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return st, fmt.Errorf("bench: INFO %s: %w", k, err)
			}
			st.CPU += time.Duration(secs * float64(time.Second))
		}
	}
	if st.Calls, err = parseCommandStats(text); err != nil {
		return st, err
	}
	return st, nil
}

// parseCommandStats reads lines like
// "cmdstat_hincrby:calls=18,usec=40,usec_per_call=2.22,...".
func parseCommandStats(text string) (map[string]int64, error) {
	calls := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, "cmdstat_")
		if !ok {
			continue
		}
		name, fields, ok := strings.Cut(rest, ":")
		if !ok {
			return nil, fmt.Errorf("bench: commandstats line %q", line)
		}
		for f := range strings.SplitSeq(fields, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("bench: commandstats line %q: %w", line, err)
				}
				calls[name] = n
			}
		}
	}
	return calls, nil
}

// ownInfoCalls is how many commands one pair of snapshots adds to
// total_commands_processed between them: INFO counts itself only after it
// has answered, so the first snapshot's INFO falls inside the window and
// the second's does not.
const ownInfoCalls = 1

// delta is what the server issued between two snapshots, without the
// snapshots' own INFO commands.
func delta(before, after CommandStats) (processed int64, calls map[string]int64) {
	calls = map[string]int64{}
	for name, n := range after.Calls {
		if name == "info" {
			continue
		}
		if d := n - before.Calls[name]; d != 0 {
			calls[name] = d
		}
	}
	return after.Processed - before.Processed - ownInfoCalls, calls
}
