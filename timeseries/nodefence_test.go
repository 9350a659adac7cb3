package timeseries_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// nodeMarkerOn is the node marker on s (pulse:flushed:<id>:n{<tag>}).
func nodeMarkerOn(t *testing.T, s *redistest.Server) string {
	t.Helper()
	for _, m := range markersOn(t, s) {
		if strings.Contains(m, ":n{") {
			return m
		}
	}
	t.Fatalf("no node marker on %s", s.Addr)
	return ""
}

// setMigrating starts moving slot from one master to another, as a
// slot migration does, without moving a key: a key of the slot that from does
// not hold is then not local to it.
func setMigrating(t *testing.T, from, to *redistest.Server, slot int) {
	t.Helper()
	to.Do("CLUSTER", "SETSLOT", slot, "IMPORTING", from.Do("CLUSTER", "MYID"))
	from.Do("CLUSTER", "SETSLOT", slot, "MIGRATING", to.Do("CLUSTER", "MYID"))
}

// setStable calls the move of slot off: from serves it as before.
func setStable(t *testing.T, from, to *redistest.Server, slot int) {
	t.Helper()
	from.Do("CLUSTER", "SETSLOT", slot, "STABLE")
	to.Do("CLUSTER", "SETSLOT", slot, "STABLE")
}

// fencedCase is what happens to a node batch between its first send,
// whose reply is lost, and its resend.
type fencedCase struct {
	name string
	// steps runs with deliver, which hands the lost send to Redis, and the
	// fence, which makes the batch's node refuse it as moved while it runs.
	steps  func(t *testing.T, f *fenceRig)
	fenced bool // the batch must have been fenced
}

// fenceRig is a recorder whose batch for node a has been sent with its
// reply lost: deliver runs that first send late.
type fenceRig struct {
	cl      *redistest.Cluster
	r       *timeseries.Recorder
	a, b    *redistest.Server
	slot    int    // the slot of fresh's 5 s key, on a
	marker  string // a's node marker
	deliver func()
}

// fence makes the keys of slot that a does not hold non-local to a for
// the duration of run, as a slot migration just started does.
func (f *fenceRig) fence(t *testing.T, run func()) {
	t.Helper()
	setMigrating(t, f.a, f.b, f.slot)
	run()
	setStable(t, f.a, f.b, f.slot)
}

// A node batch whose reply was lost is settled once whatever its fate
// and wherever its marker went: applied, or fenced (abandoned) because a
// key turned out not to be on its node, before or after the resend, with
// the marker's slot migrated to another node meanwhile. The fenced batch
// is never applied later, and its hits are written once under a new seq.
func TestClusterNodeBatchFenced(t *testing.T) {
	moveMarker := func(t *testing.T, f *fenceRig) { f.cl.MigrateSlot(t, redisc.Slot(f.marker), f.b) }
	cases := []fencedCase{
		{name: "resend of a fenced batch", fenced: true, steps: func(t *testing.T, f *fenceRig) {
			f.fence(t, f.deliver)
		}},
		{name: "original delivered after the resend was fenced", fenced: true, steps: func(t *testing.T, f *fenceRig) {
			f.fence(t, func() {
				if err := f.r.FlushRound(context.Background()); err != nil {
					t.Fatalf("resend: %v", err)
				}
			})
			f.deliver() // every key local again: only the fence refuses it
		}},
		{name: "marker's slot moved after the batch applied", steps: func(t *testing.T, f *fenceRig) {
			f.deliver()
			moveMarker(t, f)
		}},
		{name: "marker's slot moved after the batch was fenced", fenced: true, steps: func(t *testing.T, f *fenceRig) {
			f.fence(t, f.deliver)
			moveMarker(t, f)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, names, fresh := newFenceRig(t, timeseries.Config{})
			c.steps(t, f)
			if v, _ := redis.String(f.cl.Do(t, f.marker, "GET", f.marker), nil); strings.HasPrefix(v, "-") != c.fenced {
				t.Errorf("marker %s holds %q; fenced: %v", f.marker, v, c.fenced)
			}
			settle(t, f.r)
			for _, n := range names {
				assertClusterSums(t, f.cl, n, 2)
				assertLat(t, clusterDo(t, f.cl), n, 2)
			}
			assertClusterSums(t, f.cl, fresh, 1)
			assertLat(t, clusterDo(t, f.cl), fresh, 1)
		})
	}
}

// newFenceRig records twice in 20 series, once in a fresh one whose 5 s
// key no node holds yet, and takes the second round as sent with its
// replies lost.
func newFenceRig(t *testing.T, cfg timeseries.Config) (f *fenceRig, names []string, fresh string) {
	t.Helper()
	cfg.FlushInterval, cfg.FlushTimeout = time.Hour, 2*time.Second
	cl, r := clusterRecorder(t, cfg)
	var cs []*timeseries.Counter
	for i := range 20 {
		names = append(names, fmt.Sprintf("GET /fence/%d", i))
		cs = append(cs, mustCounter(t, r, names[i]))
	}
	r.RecordDuration(time.Millisecond, cs...)
	settle(t, r)
	f = &fenceRig{cl: cl, r: r}
	for i := 0; ; i++ {
		fresh = fmt.Sprintf("GET /fresh/%d", i)
		key := series.Keys{}.CountKey(5, fresh)
		f.a, f.slot = cl.MasterOf(key), redisc.Slot(key)
		f.marker = nodeMarkerOn(t, f.a)
		if redisc.Slot(f.marker) != f.slot {
			break
		}
	}
	f.b = otherMaster(t, cl, f.a)
	r.RecordDuration(2*time.Millisecond, append(cs, mustCounter(t, r, fresh))...)
	f.deliver = r.SendLost()
	return f, names, fresh
}

// A node batch spilled by Close with its reply lost is sent by the next
// recorder with its marker and seq: refused if it had landed, and if it
// had been fenced, its writes go out once in batches of their own.
func TestClusterSpilledNodeBatch(t *testing.T) {
	for _, fenced := range []bool{false, true} {
		t.Run(fmt.Sprintf("fenced=%v", fenced), func(t *testing.T) {
			dir := t.TempDir()
			pool := redistest.SharedCluster(t).Client(t)
			f, names, fresh := newFenceRig(t, timeseries.Config{SpillDir: dir, Pool: pool})
			if fenced {
				f.fence(t, f.deliver)
			} else {
				f.deliver()
			}
			pool.Close() // the cluster unreachable: Close spills
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if err := f.r.Close(ctx); err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*.spill"))
			if len(files) != 1 {
				t.Fatalf("spill files %v, want one", files)
			}
			if data, _ := os.ReadFile(files[0]); !strings.Contains(string(data), `"node":true`) {
				t.Errorf("no node batch in the spill file: %.300s", data)
			}
			r2 := newRecorder(t, nil, timeseries.Config{Pool: f.cl.Client(t), SpillDir: dir, FlushInterval: time.Hour})
			settle(t, r2)
			for _, n := range names {
				assertClusterSums(t, f.cl, n, 2)
				assertLat(t, clusterDo(t, f.cl), n, 2)
			}
			assertClusterSums(t, f.cl, fresh, 1)
			assertLat(t, clusterDo(t, f.cl), fresh, 1)
			if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
				t.Errorf("files left after sending: %v", left)
			}
		})
	}
}
