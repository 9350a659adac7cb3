package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// REDIS_URL naming one node of a cluster (the others as addr=
// parameters) runs the example on the cluster, and the log says so.
func TestRedisClusterMode(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	addrs := cl.Addrs()
	url := "redis://" + addrs[0] + "?addr=" + addrs[1] + "&addr=" + addrs[2]
	var logs syncBuffer
	base, stop := startExample(t, nil, options{RedisURL: url, logTo: &logs})
	const n = 25
	for range n {
		if code := get(t, base+"/posts/2", "", ""); code != http.StatusOK {
			t.Fatalf("GET /posts/2 = %d", code)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `msg="using Redis Cluster"`) {
		t.Errorf("the log does not say cluster mode:\n%s", logs.String())
	}
	key := "count:86400:GET /posts/:id"
	m, err := redis.Int64Map(cl.Do(t, key, "HGETALL", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got int64
	for _, v := range m {
		got += v
	}
	if got != n {
		t.Errorf("%s = %d on the cluster, want %d", key, got, n)
	}
}

// Stopped while Redis is down, the example spills what it could not
// write and stops cleanly; started again with Redis up, it sends the
// spilled hits, once.
func TestSpillAcrossRestart(t *testing.T) {
	srv := redistest.Start(t)
	spill := filepath.Join(t.TempDir(), "spill")
	db := "sqlite:" + filepath.Join(t.TempDir(), "forum.db")
	opts := options{SpillDir: spill, DatabaseURL: db, Timeouts: timeouts{Shutdown: 4 * time.Second}}
	base, stop := startExample(t, srv, opts)
	const before, during = 10, 15
	for range before {
		get(t, base+"/posts/2", "", "")
	}
	time.Sleep(1500 * time.Millisecond) // flushed while Redis is up
	srv.Stop()
	for range during {
		get(t, base+"/posts/2", "", "")
	}
	start := time.Now()
	if err := stop(); err != nil {
		t.Fatalf("stop with Redis down: %v, want a clean exit", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("stop took %v, want within the 4 s shutdown bound and a little", took)
	}
	files, _ := filepath.Glob(filepath.Join(spill, "*.spill"))
	if len(files) != 1 {
		t.Fatalf("spill files: %v, want one", files)
	}
	srv.Restart()
	_, stop2 := startExample(t, srv, opts)
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
	if got := srv.HashSum("count:86400:GET /posts/:id"); got != before+during {
		t.Errorf("GET /posts/:id counted %d, want %d", got, before+during)
	}
	if left, _ := filepath.Glob(filepath.Join(spill, "*")); len(left) != 0 {
		t.Errorf("left in the spill dir: %v", left)
	}
}
