package timeseries_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// clusterRecorder starts a recorder on the shared cluster, emptied first,
// with a client of its own unless cfg has one.
func clusterRecorder(t *testing.T, cfg timeseries.Config) (*redistest.Cluster, *timeseries.Recorder) {
	t.Helper()
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	if cfg.Pool == nil {
		cfg.Pool = cl.Client(t)
	}
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = 100 * time.Millisecond
	}
	return cl, newRecorder(t, nil, cfg) // the pool is set: no server needed
}

// clusterDo runs a command on the node serving key.
func clusterDo(t *testing.T, cl *redistest.Cluster) func(key, cmd string, args ...any) any {
	return func(key, cmd string, args ...any) any { return cl.Do(t, key, cmd, args...) }
}

// clusterSum adds up one series at one precision on the cluster.
func clusterSum(t *testing.T, cl *redistest.Cluster, p int, name string) int64 {
	t.Helper()
	key := series.Keys{}.CountKey(p, name)
	m, err := redis.Int64Map(cl.Do(t, key, "HGETALL", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func assertClusterSums(t *testing.T, cl *redistest.Cluster, name string, want int64) {
	t.Helper()
	for _, p := range series.DefaultPrecisions {
		if got := clusterSum(t, cl, p, name); got != want {
			t.Errorf("%s at precision %d sums to %d, want %d", name, p, got, want)
		}
		if cl.Do(t, "known:", "ZSCORE", "known:", series.Member(p, name)) == nil {
			t.Errorf("%s at precision %d is not listed in known:", name, p)
		}
	}
}

// settle flushes until everything is written (a failover or a migration
// may need a few rounds) and checks nothing was dropped.
func settle(t *testing.T, r *timeseries.Recorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		err := r.Flush(ctx)
		if err == nil && r.Health().PendingHits == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("not settled within 60 s: %v, %+v", err, r.Health())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if h := r.Health(); h.DroppedHits != 0 || !h.RedisUp {
		t.Errorf("health %+v, want up and nothing dropped", h)
	}
}

func TestClusterRecordsExactly(t *testing.T) {
	cl, r := clusterRecorder(t, timeseries.Config{})
	const series, workers, per = 30, 8, 500
	counters := make([]*timeseries.Counter, series)
	for i := range counters {
		counters[i] = mustCounter(t, r, fmt.Sprintf("GET /s/%d", i))
	}
	want := make([]int64, series)
	for w := range workers {
		for i := range per {
			want[(w*7+i)%series]++
		}
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				r.RecordDuration(time.Duration(i+1)*time.Millisecond, counters[(w*7+i)%series])
			}
		}()
	}
	wg.Wait()
	settle(t, r)
	h := r.Health()
	if !h.Cluster {
		t.Error("Health.Cluster is false on a cluster")
	}
	for i := range series {
		assertClusterSums(t, cl, fmt.Sprintf("GET /s/%d", i), want[i])
		assertLat(t, clusterDo(t, cl), fmt.Sprintf("GET /s/%d", i), want[i])
	}
	// The store reads it back through the cluster client.
	store := r.Store()
	got, err := store.SamplesMany(context.Background(), []string{"GET /s/1", "GET /s/2", "nope"}, 60, timeseries.Range{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || sumSamples(got["GET /s/1"]) != want[1] {
		t.Errorf("SamplesMany on the cluster: %v", got)
	}
	one, err := store.Samples(context.Background(), "GET /s/3", 5, timeseries.Range{})
	if err != nil || sumSamples(one) != want[3] {
		t.Errorf("Samples on the cluster: %v, %v", one, err)
	}
	list, err := store.Series(context.Background())
	if err != nil || len(list) != series {
		t.Errorf("Series on the cluster: %d series, %v", len(list), err)
	}
}

func sumSamples(ss []timeseries.Sample) int64 {
	var n int64
	for _, s := range ss {
		n += s.Count
	}
	return n
}

// otherMaster is a master that is not m.
func otherMaster(t *testing.T, cl *redistest.Cluster, m *redistest.Server) *redistest.Server {
	t.Helper()
	for _, s := range cl.Masters() {
		if s.Addr != m.Addr {
			return s
		}
	}
	t.Fatal("no other master")
	return nil
}

func TestClusterSlotMigrationMidTraffic(t *testing.T) {
	cl, r := clusterRecorder(t, timeseries.Config{})
	hits, route := mustCounter(t, r, "hits"), mustCounter(t, r, "GET /m")
	stop := traffic(r, hits, route)
	time.Sleep(300 * time.Millisecond)
	// Move the slot of every precision of "hits" while hits keep coming,
	// key by key, so flushes meet ASK and TRYAGAIN as well as MOVED.
	for _, p := range series.DefaultPrecisions {
		key := series.Keys{}.CountKey(p, "hits")
		from := cl.MasterOf(key)
		cl.MigrateSlotSlowly(t, redisc.Slot(key), otherMaster(t, cl, from), 20*time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	n := stop()
	settle(t, r)
	assertClusterSums(t, cl, "hits", n)
	assertClusterSums(t, cl, "GET /m", n)
	assertLat(t, clusterDo(t, cl), "hits", n)
	assertLat(t, clusterDo(t, cl), "GET /m", n)
}

func TestClusterFailoverMidTraffic(t *testing.T) {
	cl, r := clusterRecorder(t, timeseries.Config{})
	hits, route := mustCounter(t, r, "hits"), mustCounter(t, r, "GET /f")
	stop := traffic(r, hits, route)
	time.Sleep(500 * time.Millisecond)
	cl.Failover(t, cl.MasterOf("count:5:hits"))
	time.Sleep(500 * time.Millisecond)
	n := stop()
	settle(t, r)
	assertClusterSums(t, cl, "hits", n)
	assertClusterSums(t, cl, "GET /f", n)
	assertLat(t, clusterDo(t, cl), "hits", n)
	assertLat(t, clusterDo(t, cl), "GET /f", n)
}

// With WaitReplicas a flush is done only once a replica has it, so a
// master killed right after loses nothing. The replica is held back
// (SIGSTOP) for the last second before the kill, behind 32 MB of filler
// that no socket buffer takes in, so the master has acknowledged writes
// that no replica has: without WaitReplicas they are lost with it. Until
// the killed node is back as the new master's replica, nothing is
// confirmed and hits wait.
func TestClusterKillMasterWithWaitReplicas(t *testing.T) {
	cl, r := clusterRecorder(t, timeseries.Config{WaitReplicas: 1, FlushTimeout: 500 * time.Millisecond})
	hits := mustCounter(t, r, "hits")
	stop := traffic(r, hits)
	time.Sleep(500 * time.Millisecond)
	victim := cl.MasterOf("count:5:hits")
	replica := cl.ReplicaOf(victim)
	replica.Pause()
	filler := strings.Repeat("x", 8<<20)
	for i := range 4 {
		key := fmt.Sprintf("filler:{%s}:%d", redisconn.SlotTag(redisc.Slot("count:5:hits")), i)
		cl.Do(t, key, "SET", key, filler)
	}
	time.Sleep(time.Second)
	victim.Kill()
	replica.Resume()
	cl.WaitOK(t)
	time.Sleep(500 * time.Millisecond)
	n := stop()
	cl.RestartNode(t, victim)
	settle(t, r)
	assertClusterSums(t, cl, "hits", n)
	assertLat(t, clusterDo(t, cl), "hits", n)
}

// A full node refuses writes for a while; nothing is lost and Health
// says OOM while it lasts, though the other nodes keep taking theirs.
func TestClusterNodeErrorReplies(t *testing.T) {
	faults := []struct {
		name, code string
		start      func(*redistest.Server) func()
	}{
		{"oom", "OOM", func(s *redistest.Server) func() { return s.Faults().OOM() }},
		// Shorter than the 2 s node timeout, or the busy master is failed over.
		{"busy", "BUSY", func(s *redistest.Server) func() { return s.Faults().Busy(1500 * time.Millisecond) }},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			cl, r := clusterRecorder(t, timeseries.Config{})
			hits, other := mustCounter(t, r, "hits"), mustCounter(t, r, "other")
			stop := traffic(r, hits, other)
			time.Sleep(300 * time.Millisecond)
			restore := f.start(cl.MasterOf("count:5:hits"))
			saw := sawHealthError(r, f.code, 3*time.Second)
			restore()
			time.Sleep(300 * time.Millisecond)
			n := stop()
			settle(t, r)
			if !saw {
				t.Errorf("Health never showed %s", f.code)
			}
			assertClusterSums(t, cl, "hits", n)
			assertClusterSums(t, cl, "other", n)
			assertLat(t, clusterDo(t, cl), "hits", n)
			assertLat(t, clusterDo(t, cl), "other", n)
		})
	}
}

func TestClusterWrongTypeKey(t *testing.T) {
	cl, r := clusterRecorder(t, timeseries.Config{FlushInterval: time.Hour})
	cl.Do(t, "count:86400:unmatched", "SET", "count:86400:unmatched", "x")
	hits, unmatched := mustCounter(t, r, "hits"), mustCounter(t, r, "unmatched")
	for range 30 {
		r.Record(hits, unmatched)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertClusterSums(t, cl, "hits", 30)
	for _, p := range series.DefaultPrecisions[:5] {
		if got := clusterSum(t, cl, p, "unmatched"); got != 30 {
			t.Errorf("unmatched at %d: %d, want 30", p, got)
		}
	}
	if h := r.Health(); h.DroppedIncrements != 30 || h.LastDroppedKey != "count:86400:unmatched" {
		t.Errorf("health %+v, want 30 increments dropped at count:86400:unmatched", h)
	}
}

// On a cluster Ping reaches the node serving the known set.
func TestClusterPing(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	store, err := timeseries.NewStore(cl.Client(t), timeseries.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := store.Ping(ctx); err != nil {
		t.Fatalf("healthy cluster: %v", err)
	}
	owner := cl.MasterOf(series.Keys{}.KnownKey())
	owner.Pause()
	defer owner.Resume()
	short, cancelShort := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancelShort()
	if err := store.Ping(short); err == nil {
		t.Error("Ping answered while the known set's node was paused")
	}
}

// A series' lat keys are in its count key's slot, so its durations
// travel in the batches of its hits; a name whose braces would break
// that keeps its hits and has no durations.
func TestClusterDurationsColocated(t *testing.T) {
	cl, r := clusterRecorder(t, timeseries.Config{})
	timed := []string{"plain", "a{b", "GET /p/{id", "{tag}x", "GET /p/{id}"}
	for _, name := range append(slices.Clone(timed), "a}b", "x{}y") {
		c := mustCounter(t, r, name)
		for i := range 25 {
			r.RecordDuration(time.Duration(i)*time.Millisecond, c)
		}
	}
	settle(t, r)
	for _, name := range timed {
		assertClusterSums(t, cl, name, 25)
		assertLat(t, clusterDo(t, cl), name, 25)
		for _, p := range series.DefaultPrecisions {
			lat, _ := series.Keys{}.LatKey(p, name, 0)
			count := series.Keys{}.CountKey(p, name)
			if a, b := redisc.Slot(lat), redisc.Slot(count); a != b {
				t.Errorf("%s: slot %d, its count key's %d", lat, a, b)
			}
		}
	}
	for _, name := range []string{"a}b", "x{}y"} {
		assertClusterSums(t, cl, name, 25)
		if _, ok := (series.Keys{}).LatKeyPrefix(5, name); ok {
			t.Errorf("%q has lat keys", name)
		}
	}
}
