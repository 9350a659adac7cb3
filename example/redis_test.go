package main

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisinfo"
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
	t.Parallel()
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

// The embedded server's PFCOUNT of several keys is the count of their
// union, as on redis-server, and leaves no key behind; a key of another
// type is refused with Redis's error.
func TestEmbeddedPFCOUNTUnion(t *testing.T) {
	t.Parallel()
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			srv := s.start(t)
			srv.do(t, "PFADD", "a", "v1", "v2", "v3")
			srv.do(t, "PFADD", "b", "v2", "v3", "v4")
			srv.do(t, "SET", "s", "x")
			for _, tc := range []struct {
				keys []any
				want int64
			}{
				{[]any{"a"}, 3}, {[]any{"a", "b"}, 4}, {[]any{"a", "b", "a", "missing"}, 4}, {[]any{"missing", "other"}, 0},
			} {
				if got, err := redis.Int64(srv.do(t, "PFCOUNT", tc.keys...), nil); err != nil || got != tc.want {
					t.Errorf("PFCOUNT %v = %d (%v), want %d", tc.keys, got, err, tc.want)
				}
			}
			if n, _ := redis.Int64(srv.do(t, "DBSIZE"), nil); n != 3 {
				t.Errorf("DBSIZE = %d after the counts, want 3 (a, b, s)", n)
			}
			err, isErr := srv.do(t, "PFCOUNT", "a", "s").(redis.Error)
			if !isErr || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
				t.Errorf("PFCOUNT a s = %v, want WRONGTYPE", err)
			}
		})
	}
}

// With no REDIS_URL the example starts a private redis-server when one is
// installed, says so, and stops it and removes its dir on exit; a binary
// that is not there falls back to the embedded server.
func TestLocalRedisChoice(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	pool, closeRedis, err := openLocalRedis("", logger)
	if err != nil {
		t.Fatal(err)
	}
	conn := pool.Get()
	info, err := redis.String(conn.Do("INFO", "server"))
	conn.Close()
	if err != nil || !strings.Contains(info, "redis_version:") {
		t.Fatalf("INFO server: %v %q; the log:\n%s", err, info, logs.String())
	}
	addr := regexp.MustCompile(`addr=(\S+)`).FindStringSubmatch(logs.String())
	if !strings.Contains(logs.String(), "using a private redis-server") || addr == nil {
		t.Fatalf("the log does not say a private redis-server is in use:\n%s", logs.String())
	}
	closeRedis()
	if c, err := redis.Dial("tcp", addr[1]); err == nil {
		c.Close()
		t.Errorf("redis-server at %s still up after close", addr[1])
	}
	dir := regexp.MustCompile(`dir=(\S+)`).FindStringSubmatch(logs.String())
	if dir == nil {
		t.Fatalf("the log does not name the server's dir:\n%s", logs.String())
	}
	if _, err := os.Stat(dir[1]); !os.IsNotExist(err) {
		t.Errorf("the server's dir %s is still there after close (%v)", dir[1], err)
	}

	var logs2 syncBuffer
	_, closeRedis, err = openLocalRedis("/nonexistent/redis-server", slog.New(slog.NewTextHandler(&logs2, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer closeRedis()
	if !strings.Contains(logs2.String(), "redis=embedded") {
		t.Errorf("with no redis-server binary the log does not say embedded:\n%s", logs2.String())
	}
}

// A port taken between its choice and redis-server's bind (another
// process on a busy machine) makes that start fail; the next start, on
// another port, serves. The port's holder may answer nothing (redis-server
// exits, its log saying the address is in use) or answer as a Redis
// itself, which must not be taken for ours.
func TestPrivateRedisPortTaken(t *testing.T) {
	t.Parallel()
	if !redistest.Installed() {
		t.Skip("redis-server not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	other := redistest.Start(t)
	for _, holder := range []struct{ name, addr string }{{"listener", ln.Addr().String()}, {"redis-server", other.Addr}} {
		t.Run(holder.name, func(t *testing.T) {
			_, port, _ := net.SplitHostPort(holder.addr)
			taken, _ := strconv.Atoi(port)
			var picked []int
			pick := func() (int, error) {
				if len(picked) == 0 {
					picked = append(picked, taken)
					return taken, nil
				}
				port, err := freeLoopbackPort()
				picked = append(picked, port)
				return port, err
			}
			p, err := startPrivateRedisOn("redis-server", pick)
			if err != nil {
				t.Fatalf("start with the first port taken: %v (ports tried %v)", err, picked)
			}
			defer p.Close()
			if want := net.JoinHostPort("127.0.0.1", strconv.Itoa(picked[len(picked)-1])); len(picked) != 2 || p.addr != want {
				t.Errorf("serves at %s after trying %v, want the second port %s", p.addr, picked, want)
			}
			c, err := redis.Dial("tcp", p.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			info, err := redis.String(c.Do("INFO", "server"))
			if pid := redisinfo.Field(info, "process_id"); err != nil || pid != strconv.Itoa(p.cmd.Process.Pid) {
				t.Errorf("the server at %s is process %q (%v), want the one started, %d", p.addr, pid, err, p.cmd.Process.Pid)
			}

			// Taken at every try: the start fails, saying so, after portTries.
			picked = picked[:0]
			always := func() (int, error) {
				picked = append(picked, taken)
				return taken, nil
			}
			if _, err := startPrivateRedisOn("redis-server", always); !errors.Is(err, errPortTaken) || len(picked) != portTries {
				t.Errorf("every port taken: %v after %d tries, want errPortTaken after %d", err, len(picked), portTries)
			}
		})
	}
}
