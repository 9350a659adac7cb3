package timeseries_test

import (
	"context"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/testnow"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// On Redis Cluster each visitor key goes to the node of its slot, and a
// master killed mid-run loses no visitor: the ids wait until its replica
// took over and, once the old master rejoined as its replica,
// acknowledged them (WaitReplicas).
func TestClusterVisitorsThroughFailover(t *testing.T) {
	// A clock that stands still, so midnight cannot change the salt
	// mid-test and count every visitor twice.
	clock := timeseries.NewManualClock(testnow.Now())
	cl, r := clusterRecorder(t, timeseries.Config{WaitReplicas: 1, FlushTimeout: time.Second, Clock: clock})
	flush(t, r) // the salts
	hits := mustCounter(t, r, "hits")
	route := mustCounter(t, r, "GET /posts/:id")
	for i := range 500 {
		visit(r, addrOf(i), hits, route)
	}
	settleVisitors(t, r)
	key, _ := series.Keys{}.VisitorKey(3600, "hits", series.BucketStart(clock.Now().Unix(), 3600))
	master := cl.MasterOf(key)
	cl.KillMaster(t, master)
	for i := 400; i < 1000; i++ {
		visit(r, addrOf(i), hits, route)
	}
	// The promoted replica has no replica of its own until the old master
	// rejoins, so WAIT fails and the ids stay pending meanwhile.
	_ = r.Flush(canceledAfter(t, 2*time.Second))
	cl.RestartNode(t, master)
	settleVisitors(t, r)
	for _, name := range []string{"hits", "GET /posts/:id"} {
		assertVisitors(t, clusterDo(t, cl), name, clock.Now().Unix(), 1000)
	}
}

// settleVisitors flushes until no visitor is pending, and checks none
// was dropped.
func settleVisitors(t *testing.T, r *timeseries.Recorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		err := r.Flush(ctx)
		if err == nil && r.Health().PendingVisitors == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("visitors not settled within 60 s: %v, %+v", err, r.Health())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if h := r.Health(); h.DroppedVisitors != 0 {
		t.Errorf("%d visitors dropped", h.DroppedVisitors)
	}
}
