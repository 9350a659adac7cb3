package timeseries_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// statCalls is the calls of cmd in an INFO commandstats reply.
func statCalls(t *testing.T, s *redistest.Server, cmd string) int {
	t.Helper()
	info, err := redis.String(s.Do("INFO", "commandstats"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(info, "cmdstat_"+cmd+":calls=")
	if !ok {
		return 0
	}
	var n int
	fmt.Sscanf(rest, "%d", &n)
	return n
}

// A steady flush is one script call per node, not one per slot.
func TestClusterFlushOneCallPerNode(t *testing.T) {
	cl, r := clusterRecorder(t, timeseries.Config{FlushInterval: time.Hour})
	var cs []*timeseries.Counter
	for i := range 100 {
		cs = append(cs, mustCounter(t, r, fmt.Sprintf("GET /n/%d", i)))
	}
	for round := range 2 {
		for _, c := range cs {
			r.RecordDuration(time.Millisecond, c)
		}
		if round == 0 {
			flush(t, r) // loads the scripts, sets the markers' expiry
			// Markers gone (expired, say) are created again by flushes
			// that keep an expiry rather than set one: they get one too.
			for _, s := range cl.Masters() {
				for _, m := range markersOn(t, s) {
					s.Do("DEL", m)
				}
			}
			continue
		}
		for _, s := range cl.Masters() {
			s.Do("CONFIG", "RESETSTAT")
		}
		flush(t, r)
	}
	for _, s := range cl.Masters() {
		if n := statCalls(t, s, "evalsha") + statCalls(t, s, "eval"); n != 1 {
			t.Errorf("node %s ran %d flush script calls, want 1", s.Addr, n)
		}
	}
	for _, c := range cs {
		assertClusterSums(t, cl, timeseries.CounterName(c), 2)
	}
	// One marker per node, in a slot of that node.
	for _, s := range cl.Masters() {
		ms := markersOn(t, s)
		if len(ms) != 1 || cl.MasterOf(ms[0]) != s {
			t.Errorf("node %s has markers %v, want one of its own", s.Addr, ms)
		}
		for _, m := range ms {
			if ttl, _ := redis.Int64(s.Do("TTL", m), nil); ttl <= 0 {
				t.Errorf("marker %s has ttl %d", m, ttl)
			}
		}
	}
}

// markersOn are the flush markers on one node.
func markersOn(t *testing.T, s *redistest.Server) []string {
	t.Helper()
	keys, err := redis.Strings(s.Do("KEYS", "pulse:flushed:*"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// namesInSlot finds n series names whose 5 s count keys share one slot,
// so that one node batch holds several keys of that slot.
func namesInSlot(n int) (slot int, names []string) {
	bySlot := map[int][]string{}
	for i := 0; ; i++ {
		name := fmt.Sprintf("GET /mig/%d", i)
		s := redisc.Slot(series.Keys{}.CountKey(5, name))
		bySlot[s] = append(bySlot[s], name)
		if len(bySlot[s]) == n {
			return s, bySlot[s]
		}
	}
}

// halfMigrate starts moving slot from its owner to to, as a slot migration does,
// and moves only the given keys: the slot is left migrating, some of its
// keys on each node.
func halfMigrate(t *testing.T, cl *redistest.Cluster, from, to *redistest.Server, slot int, keys []string) {
	t.Helper()
	fromID, toID := from.Do("CLUSTER", "MYID"), to.Do("CLUSTER", "MYID")
	to.Do("CLUSTER", "SETSLOT", slot, "IMPORTING", fromID)
	from.Do("CLUSTER", "SETSLOT", slot, "MIGRATING", toID)
	args := []any{"127.0.0.1", to.Port(), "", 0, 5000, "KEYS"}
	for _, k := range keys {
		args = append(args, k)
	}
	from.Do("MIGRATE", args...)
}

// hashSum adds up the fields of a hash on one node; keys of lat hashes
// add their count field only.
func hashSum(t *testing.T, s *redistest.Server, key string) int64 {
	t.Helper()
	m, err := redis.Int64Map(s.Do("HGETALL", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(key, "lat:") {
		return m["n"]
	}
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// A slot whose keys are split between two nodes mid-migration, in either
// direction: the node script meets keys no longer there after writing
// some of the node's, undoes the batch's writes and fences it; its writes
// go into new batches, the slot's in one of its own, which Redis
// redirects (TRYAGAIN) until the slot has moved. Nothing is applied twice
// or lost.
func TestClusterNodeBatchOfHalfMovedSlot(t *testing.T) {
	cl, r := clusterRecorder(t, timeseries.Config{FlushInterval: time.Hour, FlushTimeout: 2 * time.Second})
	slot, names := namesInSlot(8)
	var cs []*timeseries.Counter
	for _, n := range names {
		cs = append(cs, mustCounter(t, r, n))
	}
	record := func() {
		for _, c := range cs {
			for i := range 5 {
				r.RecordDuration(time.Duration(i+1)*time.Millisecond, c)
			}
		}
	}
	record()
	settle(t, r)
	a := cl.MasterOf(series.Keys{}.CountKey(5, names[0]))
	b := otherMaster(t, cl, a)
	for round, move := range [][2]*redistest.Server{{a, b}, {b, a}} {
		from, to := move[0], move[1]
		record()
		keys, err := redis.Strings(from.Do("CLUSTER", "GETKEYSINSLOT", slot, 1000), nil)
		if err != nil {
			t.Fatal(err)
		}
		// Every other data key moves; the marker stays, so the node
		// script writes some of the slot before it meets a moved key.
		var moved, stay []string
		for _, k := range keys {
			switch {
			case strings.Contains(k, "pulse:flushed:"):
			case len(moved) <= len(stay):
				moved = append(moved, k)
			default:
				stay = append(stay, k)
			}
		}
		before := map[string]int64{}
		for _, k := range stay {
			before[k] = hashSum(t, from, k)
		}
		halfMigrate(t, cl, from, to, slot, moved)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := r.Flush(ctx); err == nil {
			t.Errorf("round %d: a flush into a half-moved slot succeeded", round)
		}
		cancel()
		for _, k := range stay {
			if got := hashSum(t, from, k); got != before[k] {
				t.Errorf("round %d: %s went from %d to %d while its batch was not applied", round, k, before[k], got)
			}
		}
		cl.MigrateSlot(t, slot, to)
		settle(t, r)
		for _, n := range names {
			assertClusterSums(t, cl, n, int64(5*(round+2)))
			assertLat(t, clusterDo(t, cl), n, int64(5*(round+2)))
		}
	}
}

// A node's reply lost (the node paused past the flush timeout, then
// resumed: it runs the call after all) leaves its batch to be resent as
// it is; the node's marker refuses it the second time. With failover,
// the promoted replica has the marker too.
func TestClusterNodeBatchResentAfterLostReply(t *testing.T) {
	for _, failover := range []bool{false, true} {
		t.Run(fmt.Sprintf("failover=%v", failover), func(t *testing.T) {
			cl, r := clusterRecorder(t, timeseries.Config{FlushInterval: time.Hour, FlushTimeout: 400 * time.Millisecond})
			var cs []*timeseries.Counter
			for i := range 40 {
				cs = append(cs, mustCounter(t, r, fmt.Sprintf("GET /lost/%d", i)))
			}
			record := func() {
				for _, c := range cs {
					for range 3 {
						r.RecordDuration(2*time.Millisecond, c)
					}
				}
			}
			record()
			settle(t, r)
			record()
			probe := series.Keys{}.CountKey(5, "GET /lost/0")
			node := cl.MasterOf(probe)
			node.Pause()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			err := r.Flush(ctx)
			cancel()
			node.Resume()
			if err == nil {
				t.Fatal("a flush to a paused node succeeded")
			}
			waitFor(t, func() bool { return hashSum(t, node, probe) == 6 }) // the lost call ran
			if failover {
				cl.Failover(t, node)
			}
			settle(t, r)
			for _, c := range cs {
				assertClusterSums(t, cl, timeseries.CounterName(c), 6)
				assertLat(t, clusterDo(t, cl), timeseries.CounterName(c), 6)
			}
		})
	}
}

// A node's writes past about 100,000 script arguments go in further
// rounds' calls: 1,500 timed series with 20 bins each make about 150,000
// per node.
func TestClusterNodeCallsCapped(t *testing.T) {
	// Held clock: bins that straddled a 5 s edge would add a bucket's
	// arguments on top of the 150,000.
	cl, r := clusterRecorder(t, timeseries.Config{Clock: heldClock(), FlushInterval: time.Hour, MaxNames: 2000, FlushTimeout: 30 * time.Second})
	var cs []*timeseries.Counter
	for i := range 1500 {
		cs = append(cs, mustCounter(t, r, fmt.Sprintf("GET /cap/%d", i)))
	}
	for _, c := range cs {
		for j := range 20 {
			r.RecordDuration(time.Duration(1<<j)*time.Microsecond, c)
		}
	}
	for _, s := range cl.Masters() {
		s.Do("CONFIG", "RESETSTAT")
	}
	settle(t, r)
	for _, s := range cl.Masters() {
		if n := statCalls(t, s, "evalsha"); n < 2 || n > 4 {
			t.Errorf("node %s ran %d node script calls, want 2 to 4", s.Addr, n)
		}
	}
	for _, c := range cs[:20] {
		assertClusterSums(t, cl, timeseries.CounterName(c), 20)
		assertLat(t, clusterDo(t, cl), timeseries.CounterName(c), 20)
	}
}
