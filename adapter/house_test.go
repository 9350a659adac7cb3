package adapter_test

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

const module = "github.com/pulse-dev/pulse/"

// spyPool hands out connections that note, for every command sent, the
// Pulse packages on the stack, outermost first, each run of frames of one
// package once.
type spyPool struct {
	pool  *redis.Pool
	mu    sync.Mutex
	paths [][]string
}

func (s *spyPool) Get() redis.Conn { return spyConn{s.pool.Get(), s} }

func (s *spyPool) note(cmd string, args []any) {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	var path []string
	for {
		f, more := frames.Next()
		if pkg := pulsePackage(f.Function); pkg != "" && (len(path) == 0 || path[0] != pkg) {
			path = append([]string{pkg}, path...)
		}
		if !more {
			break
		}
	}
	s.mu.Lock()
	s.paths = append(s.paths, path)
	s.mu.Unlock()
}

// pulsePackage is the Pulse package of a function, "" for another's and
// for the test's own.
func pulsePackage(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	pkg := fn[:slash+1+dot]
	if !strings.HasPrefix(pkg, module) || strings.HasSuffix(pkg, "_test") {
		return ""
	}
	return strings.TrimPrefix(pkg, module)
}

type spyConn struct {
	redis.Conn
	s *spyPool
}

func (c spyConn) Do(cmd string, args ...any) (any, error) {
	c.s.note(cmd, args)
	return c.Conn.Do(cmd, args...)
}

func (c spyConn) Send(cmd string, args ...any) error {
	c.s.note(cmd, args)
	return c.Conn.Send(cmd, args...)
}

func (c spyConn) DoWithTimeout(d time.Duration, cmd string, args ...any) (any, error) {
	c.s.note(cmd, args)
	return redis.DoWithTimeout(c.Conn, d, cmd, args...)
}

func (c spyConn) ReceiveWithTimeout(d time.Duration) (any, error) {
	return redis.ReceiveWithTimeout(c.Conn, d)
}

// TestRequestPathByLevel: a request's way to Redis goes down the house,
// each package once: the adapter records it in memory (no Redis call
// while it does), and the flushes write its hits, durations and visitor,
// and agree on the day's salt its visitor is hashed under, from
// timeseries through internal/redisconn, never back up through another
// package: adapter, timeseries, redisconn, three packages.
func TestRequestPathByLevel(t *testing.T) {
	srv := redistest.Start(t)
	spy := &spyPool{pool: srv.Pool()}
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: spy, FlushInterval: time.Hour,
		Clock: timeseries.NewManualClock(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(t.Context()) })
	m, err := adapter.HitsConfig[string]{Recorder: rec, Routes: true, StatusClasses: true, VisitorRoutes: true,
		SeriesName: func(string) string { return "tenant:a" }, VisitorID: func(id string) string { return id }}.Meter(adapter.Glue[string]{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(t.Context()); err != nil { // agrees on the day's salt
		t.Fatal(err)
	}
	salt := len(spy.paths)
	m.Count("visitor-a", "GET", "/posts/:id", 200, 3*time.Millisecond)
	if len(spy.paths) != salt {
		t.Fatalf("recording a request called Redis: %v", spy.paths[salt:])
	}
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if salt == 0 || len(spy.paths) == salt {
		t.Fatalf("the flushes sent %d commands for the salt, %d for the request", salt, len(spy.paths)-salt)
	}
	want := []string{"timeseries", "internal/redisconn"}
	for _, path := range spy.paths {
		if !slices.Equal(path, want) {
			t.Errorf("a write went %s, want %s", strings.Join(path, " → "), strings.Join(want, " → "))
		}
	}
}
