package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"
)

// slots is the number of hash slots of a Redis Cluster.
const slots = 16384

// ClusterOptions shapes a cluster started by StartCluster.
type ClusterOptions struct {
	// Masters is the number of masters, at least 3 (what redis-cli
	// requires); 0 means 3.
	Masters int
	// Replicas is the number of replicas of each master: 0 or 1 usually.
	// Failover and KillMaster need at least 1.
	Replicas int
	// Args are extra redis-server arguments for every node.
	Args []string
}

// Cluster is a Redis Cluster of redis-server processes owned by a test, or
// by the test binary for SharedCluster.
type Cluster struct {
	nodes []*Server
	dir   string // removed by stop; only for the shared cluster
}

// StartCluster starts Masters*(1+Replicas) cluster nodes, forms the
// cluster with redis-cli --cluster create, waits until every node reports
// cluster_state:ok, all 16384 slots served, the same slot map, and every
// replica in sync, and stops it all when tb ends.
func StartCluster(tb testing.TB, o ClusterOptions) *Cluster {
	tb.Helper()
	if o.Masters == 0 {
		o.Masters = 3
	}
	dirs := make([]string, o.Masters*(1+o.Replicas))
	for i := range dirs {
		dirs[i] = tb.TempDir()
	}
	c, err := startCluster(o, dirs)
	if err != nil {
		tb.Fatal(err)
	}
	// Registered after the TempDirs, so it runs before they are removed.
	tb.Cleanup(c.stop)
	c.bind(tb)
	return c
}

func startCluster(o ClusterOptions, dirs []string) (*Cluster, error) {
	if o.Masters < 3 {
		return nil, fmt.Errorf("redistest: a cluster needs at least 3 masters, not %d", o.Masters)
	}
	if err := needBinary("redis-cli"); err != nil {
		return nil, err
	}
	c := &Cluster{}
	ok := false
	defer func() {
		if !ok {
			c.stop()
		}
	}()
	for _, dir := range dirs {
		s, err := newServer(dir, Options{Cluster: true, Args: o.Args})
		if err != nil {
			return nil, err
		}
		c.nodes = append(c.nodes, s)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(o.Replicas), "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "redis-cli", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redistest: redis-cli --cluster create: %w\n%s", err, out)
	}
	if err := c.waitOK(30 * time.Second); err != nil {
		return nil, err
	}
	ok = true
	return c, nil
}

// stop stops every node, in parallel since each may take a moment.
func (c *Cluster) stop() {
	var wg sync.WaitGroup
	for _, s := range c.nodes {
		wg.Go(s.Stop)
	}
	wg.Wait()
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}

func (c *Cluster) bind(tb testing.TB) {
	for _, s := range c.nodes {
		s.bind(tb)
	}
}

// Nodes is every node in start order, including stopped or killed ones.
func (c *Cluster) Nodes() []*Server { return slices.Clone(c.nodes) }

// Addrs is every node's address, in the order of Nodes.
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		a[i] = s.Addr
	}
	return a
}

// Masters is the running nodes that are masters now, by their own CLUSTER
// NODES line: failovers change who they are. Nodes that do not answer are
// left out.
func (c *Cluster) Masters() []*Server { return c.withRole("master") }

// Replicas is the running nodes that are replicas now, as for Masters.
func (c *Cluster) Replicas() []*Server { return c.withRole("slave") }

func (c *Cluster) withRole(role string) []*Server {
	var out []*Server
	for _, s := range c.nodes {
		if me, err := s.myself(); err == nil && me.has(role) {
			out = append(out, s)
		}
	}
	return out
}

// ReplicaOf is a running replica of master, or nil if it has none.
func (c *Cluster) ReplicaOf(master *Server) *Server {
	id, err := master.nodeID()
	if err != nil {
		return nil
	}
	for _, s := range c.nodes {
		if me, err := s.myself(); err == nil && me.has("slave") && me.master == id {
			return s
		}
	}
	return nil
}

// MasterOf is the master serving key's slot now, or nil if no running
// node claims it.
func (c *Cluster) MasterOf(key string) *Server { return c.ownerOf(redisc.Slot(key)) }

// ownerOf asks each running master which slots it serves. While a change
// spreads two may claim a slot; the higher config epoch wins, as it does
// in Redis.
func (c *Cluster) ownerOf(slot int) *Server {
	var owner *Server
	var epoch int64 = -1
	for _, s := range c.nodes {
		me, err := s.myself()
		if err != nil || !me.has("master") || !me.serves(slot) {
			continue
		}
		if me.epoch > epoch {
			owner, epoch = s, me.epoch
		}
	}
	return owner
}

// Client returns a redisc client of the cluster with short timeouts, its
// slot map loaded, closed when tb ends. Wrap its connections in
// redisc.RetryConn to follow MOVED and ASK redirections.
func (c *Cluster) Client(tb testing.TB) *redisc.Cluster {
	tb.Helper()
	rc := &redisc.Cluster{
		StartupNodes: c.Addrs(),
		DialOptions: []redis.DialOption{
			redis.DialConnectTimeout(500 * time.Millisecond),
			redis.DialReadTimeout(2 * time.Second),
			redis.DialWriteTimeout(2 * time.Second),
		},
		CreatePool: func(addr string, opts ...redis.DialOption) (*redis.Pool, error) {
			return &redis.Pool{
				MaxIdle:     16,
				IdleTimeout: time.Minute,
				Dial:        func() (redis.Conn, error) { return redis.Dial("tcp", addr, opts...) },
			}, nil
		},
	}
	tb.Cleanup(func() { rc.Close() })
	if err := rc.Refresh(); err != nil {
		tb.Fatalf("redistest: cluster client Refresh: %v", err)
	}
	return rc
}

// Do runs one command on the master serving key and fails the test on
// error. The command need not name key: Do(tb, key, "WAIT", 1, 1000) waits
// for that master's replica.
func (c *Cluster) Do(tb testing.TB, key, cmd string, args ...any) any {
	tb.Helper()
	s := c.MasterOf(key)
	if s == nil {
		tb.Fatalf("redistest: no master serves key %q (slot %d)", key, redisc.Slot(key))
	}
	v, err := s.check(cmd, args...)
	if err != nil {
		tb.Fatalf("redistest: %s on %s: %v", cmd, s.Addr, err)
	}
	return v
}

// WaitOK waits until every running node reports cluster_state:ok and all
// slots served, all agree on which master serves which slot, none sees
// another running node as failing, and every replica is in sync with its
// master.
func (c *Cluster) WaitOK(tb testing.TB) {
	tb.Helper()
	if err := c.waitOK(30 * time.Second); err != nil {
		tb.Fatal(err)
	}
}

func (c *Cluster) waitOK(timeout time.Duration) error {
	return waitFor(timeout, "cluster ok", c.check)
}

// waitFor polls cond until it returns nil or timeout passes.
func waitFor(timeout time.Duration, what string, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: %s: not after %v: %w", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
