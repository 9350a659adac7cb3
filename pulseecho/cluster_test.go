package pulseecho_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// The same load as TestHitsExactUnderConcurrency, on a Redis Cluster of
// three masters: the series' keys spread over the nodes, and every
// precision of every series is exact.
func TestHitsExactOnCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: cl.Client(t), OnError: func(err error) { t.Log(err) }})
	if err != nil {
		t.Fatal(err)
	}
	e := forum(pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
	ts := httptest.NewServer(e)
	defer ts.Close()

	failed, _ := load(t, ts.URL, exactGoroutines, exactEach, nil)
	if failed != 0 {
		t.Fatalf("%d requests failed", failed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, name := range []string{"hits", "GET /posts/:id", "status:2xx"} {
		for _, p := range tracktest.DefaultPrecisions() {
			key := fmt.Sprintf("count:%d:%s", p, name)
			nodes[cl.MasterOf(key).Addr] = true
			m, err := redis.Int64Map(cl.Do(t, key, "HGETALL", key), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got int64
			for _, v := range m {
				got += v
			}
			if got != exactGoroutines*exactEach {
				t.Errorf("%s at precision %d: %d hits, want %d", name, p, got, exactGoroutines*exactEach)
			}
		}
	}
	do := func(key, cmd string, args ...any) any { return cl.Do(t, key, cmd, args...) }
	for _, name := range []string{"hits", "GET /posts/:id"} {
		tracktest.CheckLat(t, do, tracktest.DefaultPrecisions(), name, exactGoroutines*exactEach)
	}
	if len(nodes) < 3 {
		t.Errorf("the series' keys sit on %d nodes; the test wants them spread over 3", len(nodes))
	}
}

// CLUSTER FAILOVER of the master holding the hits keys while requests
// come: none fails, none waits on it, and every one is counted once.
func TestHitsThroughFailoverOnCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: cl.Client(t), FlushInterval: 100 * time.Millisecond, OnError: func(err error) { t.Log(err) }})
	if err != nil {
		t.Fatal(err)
	}
	e := forum(pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec, Routes: true}))
	ts := httptest.NewServer(e)
	defer ts.Close()

	const goroutines, each = 20, 1000
	var once sync.Once
	failedOver := make(chan struct{})
	failed, slowest := load(t, ts.URL, goroutines, each, func(done int64) {
		if done == goroutines*each/3 {
			once.Do(func() {
				go func() {
					defer close(failedOver)
					cl.Failover(t, cl.MasterOf("count:5:hits"))
				}()
			})
		}
	})
	<-failedOver
	if failed != 0 {
		t.Errorf("%d requests failed during the failover", failed)
	}
	t.Logf("slowest request: %v", slowest)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hits", "GET /posts/:id"} {
		for _, p := range tracktest.DefaultPrecisions() {
			key := fmt.Sprintf("count:%d:%s", p, name)
			m, err := redis.Int64Map(cl.Do(t, key, "HGETALL", key), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got int64
			for _, v := range m {
				got += v
			}
			if got != goroutines*each {
				t.Errorf("%s at precision %d: %d, want %d", name, p, got, goroutines*each)
			}
		}
		do := func(key, cmd string, args ...any) any { return cl.Do(t, key, cmd, args...) }
		tracktest.CheckLat(t, do, tracktest.DefaultPrecisions(), name, goroutines*each)
	}
}
