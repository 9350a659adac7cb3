package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

var (
	underMain atomic.Bool
	shared    struct {
		once sync.Once
		c    *Cluster
		err  error
	}
)

// Main runs the tests and then stops the cluster SharedCluster started, if
// any, and removes its files. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }
//
// For the package's Example functions, which take no testing.T, it starts
// one plain redis-server first and sets REDIS_URL to it, so an example
// dials os.Getenv("REDIS_URL") the way an app would. The examples of a
// package share it: each uses series names of its own.
func Main(m *testing.M) int {
	underMain.Store(true)
	stopExamples, err := startExampleServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	stopExamples()
	if shared.c != nil {
		shared.c.stop()
	}
	return code
}

// startExampleServer starts the server Main offers examples in REDIS_URL.
func startExampleServer() (stop func(), err error) {
	dir, err := os.MkdirTemp("", "redistest-examples-")
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	s, err := newServer(dir, Options{})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	_ = os.Setenv("REDIS_URL", "redis://"+s.Addr+"/0")
	return func() {
		s.Stop()
		_ = os.RemoveAll(dir)
	}, nil
}

// SharedCluster returns the test binary's cluster of 3 masters with one
// replica each, started on first use and stopped by Main. Tests sharing it
// must not run in parallel, should call Reset first, and must leave it
// whole (RestartNode what they kill; Reset restarts what is left dead).
// Server methods of its nodes report failures to the test that last called
// SharedCluster.
func SharedCluster(tb testing.TB) *Cluster {
	tb.Helper()
	if !underMain.Load() {
		tb.Fatal("redistest: SharedCluster needs TestMain to call redistest.Main, which stops the cluster: func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }")
	}
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "redistest-cluster-")
		if err != nil {
			shared.err = fmt.Errorf("redistest: %w", err)
			return
		}
		dirs := make([]string, 6)
		for i := range dirs {
			dirs[i] = filepath.Join(dir, strconv.Itoa(i))
			if err := os.Mkdir(dirs[i], 0o755); err != nil {
				shared.err = fmt.Errorf("redistest: %w", err)
				return
			}
		}
		shared.c, shared.err = startCluster(ClusterOptions{Masters: 3, Replicas: 1}, dirs)
		if shared.err != nil {
			_ = os.RemoveAll(dir)
			return
		}
		shared.c.dir = dir
	})
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	shared.c.bind(tb)
	return shared.c
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
	v, err := s.do(cmd, args...)
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

// check returns why the cluster is not ok yet, or nil.
func (c *Cluster) check() error {
	// Each running node's own line: what the others must agree with.
	selves := map[string]nodeLine{}
	views := map[*Server][]nodeLine{}
	var running []*Server
	for _, s := range c.nodes {
		if !s.running() {
			continue
		}
		nodes, err := s.clusterNodes()
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if n.has("myself") {
				selves[n.id] = n
			}
		}
		running = append(running, s)
		views[s] = nodes
	}
	var firstMap string
	for _, s := range running {
		info, err := redis.String(s.do("CLUSTER", "INFO"))
		if err != nil {
			return fmt.Errorf("%s: CLUSTER INFO: %w", s.Addr, err)
		}
		if st := infoField(info, "cluster_state"); st != "ok" {
			return fmt.Errorf("%s: cluster_state:%s", s.Addr, st)
		}
		if n := infoField(info, "cluster_slots_ok"); n != strconv.Itoa(slots) {
			return fmt.Errorf("%s: cluster_slots_ok:%s", s.Addr, n)
		}
		seen := 0
		for _, n := range views[s] {
			self, ok := selves[n.id]
			if !ok {
				continue // a stopped node
			}
			seen++
			if n.has("fail") || n.has("fail?") || n.has("handshake") || n.has("noaddr") || (!n.has("myself") && !n.connected) {
				return fmt.Errorf("%s sees %s as %s (%s)", s.Addr, n.addr, strings.Join(n.flags, ","), n.link)
			}
			// A master ignores a manual failover request from a node it
			// does not know as its replica yet, so roles must agree.
			if n.has("master") != self.has("master") || n.master != self.master {
				return fmt.Errorf("%s sees %s as %s of %s; it is %s of %s", s.Addr, n.addr,
					strings.Join(n.flags, ","), n.master, strings.Join(self.flags, ","), self.master)
			}
			if len(n.migrating) > 0 {
				return fmt.Errorf("%s: slots being migrated: %v", s.Addr, n.migrating)
			}
		}
		if seen != len(running) {
			return fmt.Errorf("%s knows %d of the %d running nodes", s.Addr, seen, len(running))
		}
		if me := selfOf(views[s]); me.has("slave") {
			r, err := redis.String(s.do("INFO", "replication"))
			if err != nil {
				return fmt.Errorf("%s: INFO: %w", s.Addr, err)
			}
			if st := infoField(r, "master_link_status"); st != "up" {
				return fmt.Errorf("%s: master_link_status:%s", s.Addr, st)
			}
		}
		m := slotMap(views[s])
		if firstMap == "" {
			firstMap = m
		} else if m != firstMap {
			return fmt.Errorf("%s has another slot map than %s", s.Addr, running[0].Addr)
		}
	}
	return nil
}

func selfOf(nodes []nodeLine) nodeLine {
	for _, n := range nodes {
		if n.has("myself") {
			return n
		}
	}
	return nodeLine{}
}

// Reset makes the cluster fit for the next test: nodes left stopped or
// killed are restarted, paused ones resumed, slots left half-migrated made
// stable, maxmemory set back to 0 on every node and every master flushed.
// It waits until the cluster is ok.
func (c *Cluster) Reset(tb testing.TB) {
	tb.Helper()
	for _, s := range c.nodes {
		s.Resume()
		if !s.running() {
			c.RestartNode(tb, s)
		}
	}
	for _, s := range c.nodes {
		nodes, err := s.clusterNodes()
		if err != nil {
			tb.Fatal(err)
		}
		for _, n := range nodes {
			if !n.has("myself") {
				continue
			}
			for _, slot := range n.migrating {
				if _, err := s.do("CLUSTER", "SETSLOT", slot, "STABLE"); err != nil {
					tb.Fatalf("redistest: SETSLOT %d STABLE on %s: %v", slot, s.Addr, err)
				}
			}
		}
		if _, err := s.do("CONFIG", "SET", "maxmemory", "0"); err != nil {
			tb.Fatalf("redistest: CONFIG SET maxmemory 0 on %s: %v", s.Addr, err)
		}
	}
	for _, s := range c.Masters() {
		if _, err := s.do("FLUSHALL"); err != nil {
			tb.Fatalf("redistest: FLUSHALL on %s: %v", s.Addr, err)
		}
	}
	c.WaitOK(tb)
}

// Failover makes master's replica take over with CLUSTER FAILOVER, the
// planned, lossless way: the replica catches up first. It waits until the
// two have swapped roles and the cluster is ok. Clients with the old slot
// map get MOVED; writes to the old master get MOVED too.
func (c *Cluster) Failover(tb testing.TB, master *Server) {
	tb.Helper()
	replica := c.ReplicaOf(master)
	if replica == nil {
		tb.Fatalf("redistest: Failover: %s is not a master with a running replica", master.Addr)
	}
	replicaID, err := replica.nodeID()
	if err != nil {
		tb.Fatal(err)
	}
	var asked time.Time
	err = waitFor(30*time.Second, "failover of "+master.Addr, func() error {
		// A manual failover gives up after 5 s (say, the replica was
		// not in sync yet); ask again then.
		if time.Since(asked) > 6*time.Second {
			if _, err := replica.do("CLUSTER", "FAILOVER"); err != nil {
				return fmt.Errorf("CLUSTER FAILOVER on %s: %w", replica.Addr, err)
			}
			asked = time.Now()
		}
		if me, err := replica.myself(); err != nil || !me.has("master") {
			return fmt.Errorf("%s is not master yet", replica.Addr)
		}
		if me, err := master.myself(); err != nil || !me.has("slave") || me.master != replicaID {
			return fmt.Errorf("%s is not a replica of %s yet", master.Addr, replica.Addr)
		}
		return c.check()
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// KillMaster kills master with SIGKILL, as a crash would, and waits until
// the other nodes have marked it failed, its replica has won the election
// and the cluster is ok again: some 3 to 5 s with the 2 s node timeout.
// Writes the replica had not received are lost, as in production; use WAIT
// first to keep them. Clients get connection errors from the dead node
// until they refresh their slot map. RestartNode brings it back.
func (c *Cluster) KillMaster(tb testing.TB, master *Server) {
	tb.Helper()
	if me, err := master.myself(); err != nil || !me.has("master") {
		tb.Fatalf("redistest: KillMaster: %s is not a master", master.Addr)
	}
	replica := c.ReplicaOf(master)
	if replica == nil {
		tb.Fatalf("redistest: KillMaster: %s has no running replica to take over", master.Addr)
	}
	master.Kill()
	err := waitFor(30*time.Second, "promotion of "+replica.Addr, func() error {
		if me, err := replica.myself(); err != nil || !me.has("master") {
			return fmt.Errorf("%s is not master yet", replica.Addr)
		}
		return c.check()
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// RestartNode starts a stopped or killed node again with its data and
// nodes.conf, so it rejoins with its old identity. A master that was
// replaced learns of it from the others and turns into a replica of its
// successor. It waits until the node has synced and the cluster is ok.
func (c *Cluster) RestartNode(tb testing.TB, s *Server) {
	tb.Helper()
	if s.running() {
		tb.Fatalf("redistest: RestartNode: %s is running; Kill or Stop it first", s.Addr)
	}
	if _, err := s.launch(nil); err != nil {
		tb.Fatal(err)
	}
	// check requires the node's slot map to agree with the others' and a
	// replica's link to be up, which is what rejoining means.
	if err := c.waitOK(30 * time.Second); err != nil {
		tb.Fatal(err)
	}
}

// MigrateSlot moves slot and its keys to the master to, as redis-cli
// --cluster reshard does: SETSLOT IMPORTING on to, MIGRATING on the
// owner, GETKEYSINSLOT and MIGRATE 100 keys at a time, then SETSLOT NODE
// on to, the old owner and every other master. It waits until the cluster
// is ok.
func (c *Cluster) MigrateSlot(tb testing.TB, slot int, to *Server) {
	tb.Helper()
	if err := c.migrate(slot, to, 100, 0); err != nil {
		tb.Fatal(err)
	}
}

// MigrateSlotSlowly is MigrateSlot moving one key at a time and sleeping
// pause after each, so that traffic running meanwhile meets the slot
// half-moved: ASK redirections for keys already moved, TRYAGAIN for
// multi-key commands whose keys are split between the two nodes. It blocks
// until done; run the traffic in another goroutine.
func (c *Cluster) MigrateSlotSlowly(tb testing.TB, slot int, to *Server, pause time.Duration) {
	tb.Helper()
	if err := c.migrate(slot, to, 1, pause); err != nil {
		tb.Fatal(err)
	}
}

func (c *Cluster) migrate(slot int, to *Server, batch int, pause time.Duration) error {
	if slot < 0 || slot >= slots {
		return fmt.Errorf("redistest: no slot %d", slot)
	}
	from := c.ownerOf(slot)
	if from == nil {
		return fmt.Errorf("redistest: MigrateSlot: no master serves slot %d", slot)
	}
	if from == to {
		return nil
	}
	if me, err := to.myself(); err != nil || !me.has("master") {
		return fmt.Errorf("redistest: MigrateSlot: %s is not a master", to.Addr)
	}
	fromID, err := from.nodeID()
	if err != nil {
		return err
	}
	toID, err := to.nodeID()
	if err != nil {
		return err
	}
	if _, err := to.do("CLUSTER", "SETSLOT", slot, "IMPORTING", fromID); err != nil {
		return fmt.Errorf("redistest: SETSLOT %d IMPORTING on %s: %w", slot, to.Addr, err)
	}
	if _, err := from.do("CLUSTER", "SETSLOT", slot, "MIGRATING", toID); err != nil {
		return fmt.Errorf("redistest: SETSLOT %d MIGRATING on %s: %w", slot, from.Addr, err)
	}
	for {
		keys, err := redis.Values(from.do("CLUSTER", "GETKEYSINSLOT", slot, batch))
		if err != nil {
			return fmt.Errorf("redistest: GETKEYSINSLOT %d on %s: %w", slot, from.Addr, err)
		}
		if len(keys) == 0 {
			break
		}
		args := append([]any{"127.0.0.1", to.port, "", 0, 5000, "KEYS"}, keys...)
		if _, err := from.do("MIGRATE", args...); err != nil {
			return fmt.Errorf("redistest: MIGRATE slot %d from %s to %s: %w", slot, from.Addr, to.Addr, err)
		}
		time.Sleep(pause)
	}
	// The new owner first, so that from then on the old one redirects to a
	// node that already serves the slot.
	if _, err := to.do("CLUSTER", "SETSLOT", slot, "NODE", toID); err != nil {
		return fmt.Errorf("redistest: SETSLOT %d NODE on %s: %w", slot, to.Addr, err)
	}
	if _, err := from.do("CLUSTER", "SETSLOT", slot, "NODE", toID); err != nil {
		return fmt.Errorf("redistest: SETSLOT %d NODE on %s: %w", slot, from.Addr, err)
	}
	for _, s := range c.Masters() {
		if s == to || s == from {
			continue
		}
		if _, err := s.do("CLUSTER", "SETSLOT", slot, "NODE", toID); err != nil {
			return fmt.Errorf("redistest: SETSLOT %d NODE on %s: %w", slot, s.Addr, err)
		}
	}
	return c.waitOK(30 * time.Second)
}

// nodeLine is one line of CLUSTER NODES.
type nodeLine struct {
	id        string
	addr      string
	flags     []string
	master    string // master's ID for a replica, "-" otherwise
	epoch     int64
	link      string
	connected bool
	ranges    [][2]int
	migrating []int // slots in MIGRATING or IMPORTING state
}

func (n nodeLine) has(flag string) bool { return slices.Contains(n.flags, flag) }

func (n nodeLine) serves(slot int) bool {
	for _, r := range n.ranges {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

func parseNodes(text string) ([]nodeLine, error) {
	var out []nodeLine
	for line := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			return nil, fmt.Errorf("redistest: CLUSTER NODES line %q", line)
		}
		epoch, err := strconv.ParseInt(f[6], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("redistest: CLUSTER NODES line %q: %w", line, err)
		}
		n := nodeLine{
			id:        f[0],
			addr:      strings.Split(strings.Split(f[1], ",")[0], "@")[0],
			flags:     strings.Split(f[2], ","),
			master:    f[3],
			epoch:     epoch,
			link:      f[7],
			connected: f[7] == "connected",
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				// [slot->-id] or [slot-<-id]
				s, _, _ := strings.Cut(strings.TrimPrefix(r, "["), "-")
				if v, err := strconv.Atoi(s); err == nil {
					n.migrating = append(n.migrating, v)
				}
				continue
			}
			lo, hi, found := strings.Cut(r, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if found {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("redistest: CLUSTER NODES slot range %q", r)
			}
			n.ranges = append(n.ranges, [2]int{a, b})
		}
		out = append(out, n)
	}
	return out, nil
}

// slotMap is a canonical form of which node serves which slots.
func slotMap(nodes []nodeLine) string {
	var parts []string
	for _, n := range nodes {
		if len(n.ranges) > 0 {
			parts = append(parts, fmt.Sprint(n.id, n.ranges))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

func (s *Server) clusterNodes() ([]nodeLine, error) {
	text, err := redis.String(s.do("CLUSTER", "NODES"))
	if err != nil {
		return nil, fmt.Errorf("redistest: CLUSTER NODES on %s: %w", s.Addr, err)
	}
	return parseNodes(text)
}

// myself is the node's own line of CLUSTER NODES: its role as it sees it.
func (s *Server) myself() (nodeLine, error) {
	if !s.running() {
		return nodeLine{}, fmt.Errorf("redistest: %s is not running", s.Addr)
	}
	nodes, err := s.clusterNodes()
	if err != nil {
		return nodeLine{}, err
	}
	for _, n := range nodes {
		if n.has("myself") {
			return n, nil
		}
	}
	return nodeLine{}, errors.New("redistest: CLUSTER NODES without myself on " + s.Addr)
}

// nodeID is the node's cluster ID, kept in nodes.conf across restarts.
func (s *Server) nodeID() (string, error) {
	s.mu.Lock()
	id := s.id
	s.mu.Unlock()
	if id != "" {
		return id, nil
	}
	id, err := redis.String(s.do("CLUSTER", "MYID"))
	if err != nil {
		return "", fmt.Errorf("redistest: CLUSTER MYID on %s: %w", s.Addr, err)
	}
	s.mu.Lock()
	s.id = id
	s.mu.Unlock()
	return id, nil
}
