package redistest_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// conn is a connection of rc that follows MOVED and ASK.
func conn(t *testing.T, rc *redisc.Cluster) redis.Conn {
	t.Helper()
	c, err := redisc.RetryConn(rc.Get(), 5, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func write(t *testing.T, c redis.Conn, keys []string) {
	t.Helper()
	for _, k := range keys {
		if _, err := c.Do("SET", k, "v:"+k); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
}

func readBack(t *testing.T, c redis.Conn, keys []string) {
	t.Helper()
	for _, k := range keys {
		v, err := redis.String(c.Do("GET", k))
		if err != nil || v != "v:"+k {
			t.Fatalf("GET %s: %q, %v", k, v, err)
		}
	}
}

func keys(prefix string, n int) []string {
	k := make([]string, n)
	for i := range k {
		k[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return k
}

func TestClusterForms(t *testing.T) {
	c := redistest.SharedCluster(t)
	c.Reset(t)
	if len(c.Nodes()) != 6 || len(c.Masters()) != 3 || len(c.Replicas()) != 3 {
		t.Fatalf("%d nodes, %d masters, %d replicas", len(c.Nodes()), len(c.Masters()), len(c.Replicas()))
	}
	for _, m := range c.Masters() {
		if c.ReplicaOf(m) == nil {
			t.Errorf("master %s has no replica", m.Addr)
		}
	}
	for _, s := range c.Nodes() {
		info, _ := redis.String(s.Do("CLUSTER", "INFO"), nil)
		if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_assigned:16384") {
			t.Errorf("%s:\n%s", s.Addr, info)
		}
		if s.Port() >= 55535 {
			t.Errorf("port %d leaves no room for the bus port", s.Port())
		}
	}
	// Every slot is served, by one of the masters.
	masters := map[string]bool{}
	for _, m := range c.Masters() {
		masters[m.Addr] = true
	}
	ranges, err := redis.Values(c.Nodes()[0].Do("CLUSTER", "SLOTS"), nil)
	if err != nil {
		t.Fatal(err)
	}
	covered := 0
	for _, r := range ranges {
		v, _ := redis.Values(r, nil)
		from, _ := redis.Int(v[0], nil)
		to, _ := redis.Int(v[1], nil)
		owner, _ := redis.Values(v[2], nil)
		host, _ := redis.String(owner[0], nil)
		port, _ := redis.Int(owner[1], nil)
		if !masters[fmt.Sprintf("%s:%d", host, port)] {
			t.Errorf("slots %d-%d served by %s:%d, not a master", from, to, host, port)
		}
		covered += to - from + 1
		for _, slot := range []int{from, to} {
			if m := c.MasterOf(slotKey(slot)); m == nil || m.Port() != port {
				t.Errorf("MasterOf slot %d: %v, want port %d", slot, m, port)
			}
		}
	}
	if covered != 16384 {
		t.Fatalf("%d slots covered", covered)
	}
	rc := c.Client(t)
	k := keys("forms:", 100)
	write(t, conn(t, rc), k)
	readBack(t, conn(t, rc), k)
	if v := c.Do(t, "forms:7", "GET", "forms:7"); v == nil {
		t.Fatal("Do GET on the owner found nothing")
	}
}

// slotKey is a key hashing to slot, found by trying hash tags.
var slotKeys = sync.OnceValue(func() map[int]string {
	m := map[int]string{}
	for i := 0; len(m) < 16384; i++ {
		k := fmt.Sprintf("{%d}", i)
		if _, ok := m[redisc.Slot(k)]; !ok {
			m[redisc.Slot(k)] = k
		}
	}
	return m
})

func slotKey(slot int) string { return slotKeys()[slot] }

func TestFailover(t *testing.T) {
	c := redistest.SharedCluster(t)
	c.Reset(t)
	rc := c.Client(t)
	cn := conn(t, rc)
	k := keys("failover:", 200)
	write(t, cn, k)

	master := c.MasterOf("failover:0")
	replica := c.ReplicaOf(master)
	c.Failover(t, master)
	if got := c.MasterOf("failover:0"); got != replica {
		t.Fatalf("after Failover the owner is %v, want the old replica %s", got, replica.Addr)
	}
	if got := c.ReplicaOf(replica); got != master {
		t.Fatalf("after Failover the old master is not the new one's replica: %v", got)
	}
	// The client's slot map is stale: RetryConn follows the MOVED.
	readBack(t, cn, k)
	c.Failover(t, replica) // back as it was, for the next tests
}

func TestKillMasterAndRestart(t *testing.T) {
	c := redistest.SharedCluster(t)
	c.Reset(t)
	k := keys("kill:", 200)
	write(t, conn(t, c.Client(t)), k)
	master := c.MasterOf("kill:0")
	replica := c.ReplicaOf(master)
	// Replication is asynchronous: wait for it so that no write is lost.
	if n, _ := redis.Int(c.Do(t, "kill:0", "WAIT", 1, 2000), nil); n != 1 {
		t.Fatalf("WAIT: %d replicas", n)
	}

	c.KillMaster(t, master)
	if got := c.MasterOf("kill:0"); got != replica {
		t.Fatalf("after KillMaster the owner is %v, want %s", got, replica.Addr)
	}
	readBack(t, conn(t, c.Client(t)), k)

	c.RestartNode(t, master)
	if got := c.ReplicaOf(replica); got != master {
		t.Fatalf("restarted node is not a replica of its successor: %v", got)
	}
	// Synced: the data is on it, readable once the connection is READONLY.
	rd, err := redis.Dial("tcp", master.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if _, err := rd.Do("READONLY"); err != nil {
		t.Fatal(err)
	}
	if v, err := redis.String(rd.Do("GET", "kill:0")); err != nil || v != "v:kill:0" {
		t.Fatalf("GET on the restarted replica: %q, %v", v, err)
	}
}

func TestMigrateSlot(t *testing.T) {
	c := redistest.SharedCluster(t)
	c.Reset(t)
	cn := conn(t, c.Client(t))
	k := keys("{mig}:", 250) // all in one slot
	write(t, cn, k)
	slot := redisc.Slot("{mig}")
	from := c.MasterOf("{mig}")
	to := otherMaster(t, c, from)

	c.MigrateSlot(t, slot, to)
	if got := c.MasterOf("{mig}"); got != to {
		t.Fatalf("slot %d served by %v, want %s", slot, got, to.Addr)
	}
	if n, _ := redis.Int(to.Do("CLUSTER", "COUNTKEYSINSLOT", slot), nil); n != len(k) {
		t.Fatalf("%d keys on the new owner, want %d", n, len(k))
	}
	readBack(t, cn, k)
}

func otherMaster(t *testing.T, c *redistest.Cluster, not *redistest.Server) *redistest.Server {
	t.Helper()
	for _, m := range c.Masters() {
		if m != not {
			return m
		}
	}
	t.Fatal("no other master")
	return nil
}

// While a slot moves key by key, the old owner answers ASK for keys already
// gone and TRYAGAIN for multi-key commands over split keys, and a client
// following redirections still reads every key.
func TestMigrateSlotSlowly(t *testing.T) {
	c := redistest.SharedCluster(t)
	c.Reset(t)
	rc := c.Client(t)
	k := keys("{slow}:", 20)
	write(t, conn(t, rc), k)
	slot := redisc.Slot("{slow}")
	from := c.MasterOf("{slow}")
	to := otherMaster(t, c, from)

	done := make(chan struct{})
	var ask, tryAgain, misses int
	var trafficErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		raw, err := redis.Dial("tcp", from.Addr)
		if err != nil {
			trafficErr = err
			return
		}
		defer raw.Close()
		follow, err := redisc.RetryConn(rc.Get(), 5, 20*time.Millisecond)
		if err != nil {
			trafficErr = err
			return
		}
		defer follow.Close()
		mget := make([]any, len(k))
		for i, key := range k {
			mget[i] = key
		}
		for {
			select {
			case <-done:
				return
			default:
			}
			for _, key := range k {
				if _, err := raw.Do("GET", key); err != nil {
					if re := redisc.ParseRedir(err); re != nil && re.Type == "ASK" {
						ask++
					}
				}
				if v, err := redis.String(follow.Do("GET", key)); err != nil || v != "v:"+key {
					misses++
					trafficErr = fmt.Errorf("GET %s through redisc: %q, %v", key, v, err)
				}
			}
			if _, err := raw.Do("MGET", mget...); redisc.IsTryAgain(err) {
				tryAgain++
			}
		}
	})
	c.MigrateSlotSlowly(t, slot, to, 30*time.Millisecond)
	close(done)
	wg.Wait()
	t.Logf("ASK %d, TRYAGAIN %d", ask, tryAgain)
	if trafficErr != nil {
		t.Fatalf("%d failed reads, last: %v", misses, trafficErr)
	}
	if ask == 0 || tryAgain == 0 {
		t.Fatalf("ASK %d, TRYAGAIN %d: want both seen during the migration", ask, tryAgain)
	}
	if got := c.MasterOf("{slow}"); got != to {
		t.Fatalf("slot served by %v, want %s", got, to.Addr)
	}
}

// A cluster of its own, without replicas, and a fault on one of its
// masters as a cluster client sees it.
func TestStartClusterOOM(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3})
	if len(c.Masters()) != 3 || len(c.Replicas()) != 0 {
		t.Fatalf("%d masters, %d replicas", len(c.Masters()), len(c.Replicas()))
	}
	cn := conn(t, c.Client(t))
	restore := c.MasterOf("oom").Faults().OOM()
	_, err := cn.Do("SET", "oom", "v")
	if err == nil || !strings.HasPrefix(err.Error(), "OOM ") {
		t.Fatalf("SET on an OOM master: %v", err)
	}
	restore()
	if _, err := cn.Do("SET", "oom", "v"); err != nil {
		t.Fatalf("SET after restore: %v", err)
	}
}

// TestResetWaitsOnASlowNode: a node slow to answer (CLIENT PAUSE, as a
// loaded machine keeps a server off the CPU for seconds) holds Reset up
// and does not fail it: the commands Reset sends must succeed, so only a
// hang may end them, not the 2 s the harness's polling allows.
func TestResetWaitsOnASlowNode(t *testing.T) {
	c := redistest.SharedCluster(t)
	c.Reset(t)
	slow := c.Masters()[0]
	slow.Do("CLIENT", "PAUSE", 3000, "ALL")
	start := time.Now()
	c.Reset(t)
	if waited := time.Since(start); waited < 2*time.Second {
		t.Fatalf("Reset took %v: the node was not paused, so this test shows nothing", waited)
	}
}
