package timeseries_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// tripCounter counts the round trips to each node of a cluster.
type tripCounter struct {
	mu    sync.Mutex
	nodes map[string]*atomic.Int64
}

func (tc *tripCounter) of(addr string) *atomic.Int64 {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.nodes[addr] == nil {
		tc.nodes[addr] = new(atomic.Int64)
	}
	return tc.nodes[addr]
}

func (tc *tripCounter) reset() {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for _, n := range tc.nodes {
		n.Store(0)
	}
}

// counted returns the round trips since the last reset, by node.
func (tc *tripCounter) counted() map[string]int64 {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	out := map[string]int64{}
	for addr, n := range tc.nodes {
		if v := n.Load(); v > 0 {
			out[addr] = v
		}
	}
	return out
}

// countingCluster is a client of cl whose connections count their round
// trips per node.
func countingCluster(t *testing.T, cl *redistest.Cluster) (*redisc.Cluster, *tripCounter) {
	tc := &tripCounter{nodes: map[string]*atomic.Int64{}}
	rc := &redisc.Cluster{
		StartupNodes: cl.Addrs(),
		CreatePool: func(addr string, _ ...redis.DialOption) (*redis.Pool, error) {
			dial := func(network, a string) (net.Conn, error) {
				c, err := net.Dial(network, a)
				if err != nil {
					return nil, err
				}
				return &roundTripConn{Conn: c, trips: tc.of(addr)}, nil
			}
			return &redis.Pool{MaxIdle: 4, Dial: func() (redis.Conn, error) {
				return redis.Dial("tcp", addr, redis.DialNetDial(dial), redis.DialReadTimeout(2*time.Second))
			}}, nil
		},
	}
	t.Cleanup(func() { rc.Close() })
	if err := rc.Refresh(); err != nil {
		t.Fatal(err)
	}
	return rc, tc
}

// On a cluster a window's read is one round trip to the one node that
// holds all its buckets, and its union is right there.
func TestVisitorsOnCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	rc, tc := countingCluster(t, cl)
	s := readStore(t, rc, "uqc:")
	do := func(key string, args ...any) (any, error) { return cl.Do(t, key, "PFADD", args...), nil }
	_, _, keys := overlapping(t, do, s, "GET /posts/:id")
	master := cl.MasterOf(keys[0].(string))
	ctx := context.Background()
	if _, err := s.LastVisitors(ctx, "GET /posts/:id", 60, 12); err != nil {
		t.Fatal(err) // connects to the node first
	}

	tc.reset()
	u, err := s.LastVisitors(ctx, "GET /posts/:id", 60, 12)
	if err != nil {
		t.Fatal(err)
	}
	if got := tc.counted(); len(got) != 1 || got[master.Addr] != 1 {
		t.Errorf("round trips by node %v, want 1 to %s only", got, master.Addr)
	}
	if !near(u.Window, 650) || len(u.Buckets) != 12 {
		t.Errorf("window %d over %d buckets, want 650 over 12", u.Window, len(u.Buckets))
	}
}
