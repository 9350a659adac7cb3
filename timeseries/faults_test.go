package timeseries_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// traffic records requests, with durations, into the given counters of
// r from a few goroutines until stop is called, which returns how many
// were recorded.
func traffic(r *timeseries.Recorder, counters ...*timeseries.Counter) (stop func() int64) {
	var n atomic.Int64
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				r.RecordDuration(time.Duration(n.Add(1)%97+1)*time.Millisecond, counters...)
				time.Sleep(time.Millisecond)
			}
		}()
	}
	return func() int64 {
		close(done)
		wg.Wait()
		return n.Load()
	}
}

// sawHealthError watches r's Health for d and reports whether it showed
// Redis down with an error containing code.
func sawHealthError(r *timeseries.Recorder, code string, d time.Duration) bool {
	saw := false
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if h := r.Health(); !h.RedisUp && strings.Contains(h.LastError, code) {
			saw = true
		}
	}
	return saw
}

// Error replies of a server that cannot take writes for a while must
// cost no hit, and Health must say so while they last.
func TestErrorRepliesLoseNothing(t *testing.T) {
	faults := []struct {
		name  string
		code  string
		start func(*redistest.Server) (restore func())
	}{
		{"oom", "OOM", func(s *redistest.Server) func() { return s.Faults().OOM() }},
		{"readonly", "READONLY", func(s *redistest.Server) func() { return s.Faults().ReadOnly() }},
		{"busy", "BUSY", func(s *redistest.Server) func() { return s.Faults().Busy(5 * time.Second) }},
		{"loading", "LOADING", func(s *redistest.Server) func() { return s.Faults().Loading(5 * time.Second) }},
	}
	for _, f := range faults {
		for _, wt := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/writeThrough=%v", f.name, wt), func(t *testing.T) {
				t.Parallel() // each on its own server; mostly waiting
				srv := redistest.Start(t)
				r := newRecorder(t, srv, timeseries.Config{
					WriteThrough:  wt,
					FlushInterval: 100 * time.Millisecond,
					FlushTimeout:  time.Second,
				})
				hits, route := mustCounter(t, r, "hits"), mustCounter(t, r, "GET /x")
				stop := traffic(r, hits, route)
				time.Sleep(300 * time.Millisecond)
				restore := f.start(srv)
				saw := sawHealthError(r, f.code, 5*time.Second)
				restore()
				time.Sleep(300 * time.Millisecond)
				n := stop()
				ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
				defer cancel()
				if err := r.Flush(ctx); err != nil {
					// The backoff may still be running out; Close retries.
					if err := r.Close(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if !saw {
					t.Errorf("Health never showed Redis down with %s during the fault", f.code)
				}
				if h := r.Health(); !h.RedisUp || h.DroppedHits != 0 || h.PendingHits != 0 {
					t.Errorf("after the fault: %+v, want up, nothing pending or dropped", h)
				}
				assertSums(t, srv, "", "hits", n)
				assertSums(t, srv, "", "GET /x", n)
				assertLat(t, serverDo(srv), "hits", n)
				assertLat(t, serverDo(srv), "GET /x", n)
			})
		}
	}
}

// A key of another type refuses only its own increments: every other
// series, and the other precisions of the same series, land.
func TestWrongTypeKeyDropsOnlyItsIncrements(t *testing.T) {
	srv := redistest.Start(t)
	for _, wt := range []bool{false, true} {
		t.Run(fmt.Sprintf("writeThrough=%v", wt), func(t *testing.T) {
			srv.FlushAll()
			srv.Do("SET", "count:86400:unmatched", "x")
			r := newRecorder(t, srv, timeseries.Config{WriteThrough: wt, FlushInterval: time.Hour})
			hits, unmatched := mustCounter(t, r, "hits"), mustCounter(t, r, "unmatched")
			for range 50 {
				r.Record(hits, unmatched)
			}
			flush(t, r)
			assertSums(t, srv, "", "hits", 50)
			for _, p := range series.DefaultPrecisions[:5] {
				key := fmt.Sprintf("count:%d:unmatched", p)
				if got := srv.HashSum(key); got != 50 {
					t.Errorf("%s sums to %d, want 50", key, got)
				}
			}
			if v, _ := redis.String(srv.Do("GET", "count:86400:unmatched"), nil); v != "x" {
				t.Errorf("the foreign value became %q", v)
			}
			h := r.Health()
			if h.DroppedIncrements != 50 || h.DroppedHits != 9 || h.LastDroppedKey != "count:86400:unmatched" || !h.RedisUp {
				t.Errorf("health %+v, want 50 increments (9 hits) dropped at count:86400:unmatched, Redis up", h)
			}
			if score := srv.Do("ZSCORE", "known:", "86400:hits"); score == nil {
				t.Error("86400:hits not listed")
			}
		})
	}
}

// Scripts travel as EVALSHA; the source is sent only when the server
// lacks it (after a restart or SCRIPT FLUSH).
func TestScriptsSentBySHA(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
	c := mustCounter(t, r, "hits")
	srv.Do("CONFIG", "RESETSTAT")
	for i := range 10 {
		if i == 5 {
			srv.Do("SCRIPT", "FLUSH")
		}
		c.Inc()
		flush(t, r)
	}
	assertSums(t, srv, "", "hits", 10)
	stats, _ := redis.String(srv.Do("INFO", "commandstats"), nil)
	calls := func(cmd string) string {
		for _, line := range strings.Split(stats, "\n") {
			if strings.HasPrefix(line, "cmdstat_"+cmd+":") {
				calls, _, _ := strings.Cut(strings.SplitN(line, ":", 2)[1], ",")
				return calls
			}
		}
		return "none"
	}
	if got := calls("eval"); got != "calls=2" {
		t.Errorf("EVAL %s, want calls=2 (once at first, once after SCRIPT FLUSH)", got)
	}
	if got := calls("evalsha"); got != "calls=10" {
		t.Errorf("EVALSHA %s, want calls=10", got)
	}
}

// WaitReplicas: a flush that no replica confirmed is not done; once a
// replica follows, it is, and counted once.
func TestWaitReplicas(t *testing.T) {
	master := redistest.Start(t)
	r := newRecorder(t, master, timeseries.Config{WaitReplicas: 1, FlushInterval: time.Hour, FlushTimeout: 2 * time.Second})
	c := mustCounter(t, r, "hits")
	for range 7 {
		c.Inc()
	}
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("flush with no replica succeeded")
	}
	if h := r.Health(); h.RedisUp || h.PendingHits != 7 || !strings.Contains(h.LastError, "replicas") {
		t.Errorf("health %+v, want down, 7 pending, a WAIT error", h)
	}
	replica := redistest.Start(t)
	host, port, _ := strings.Cut(master.Addr, ":")
	replica.Do("REPLICAOF", host, port)
	waitFor(t, func() bool {
		info, _ := redis.String(replica.Do("INFO", "replication"), nil)
		return strings.Contains(info, "master_link_status:up")
	})
	flush(t, r)
	assertSums(t, master, "", "hits", 7)
	assertSums(t, replica, "", "hits", 7)
}

// Close with Redis down spills what it could not write; the next
// recorder with the same directory sends it once and removes the file.
func TestSpillOnCloseSentOnce(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	r1 := newRecorder(t, srv, timeseries.Config{SpillDir: dir, FlushInterval: time.Hour, FlushTimeout: 200 * time.Millisecond})
	hits, route := mustCounter(t, r1, "hits"), mustCounter(t, r1, "GET /y")
	for i := range 40 {
		r1.RecordDuration(time.Duration(i)*time.Millisecond, hits, route)
	}
	flush(t, r1) // some land before the outage
	srv.Stop()
	for i := range 60 {
		r1.RecordDuration(time.Duration(i)*time.Millisecond, hits, route)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	if err := r1.Close(ctx); err != nil {
		t.Fatalf("Close with Redis down and a spill dir: %v", err)
	}
	// A hang guard, not a speed check (internal/testenv/harness): a
	// Close that ignored its context would not return at all.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("Close took %v with a 1 s context", d)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.spill"))
	if len(files) != 1 {
		t.Fatalf("spill files %v, want one", files)
	}
	saved, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}

	srv.Restart()
	r2 := newRecorder(t, srv, timeseries.Config{SpillDir: dir, FlushInterval: time.Hour})
	if h := r2.Health(); h.PendingHits != 120 {
		t.Errorf("loaded recorder pending %d, want 120", h.PendingHits)
	}
	flush(t, r2)
	assertSums(t, srv, "", "hits", 100)
	assertSums(t, srv, "", "GET /y", 100)
	assertLat(t, serverDo(srv), "hits", 100)
	assertLat(t, serverDo(srv), "GET /y", 100)
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("files left after sending: %v", left)
	}

	// A recorder that sent the file but died before removing it: the file
	// is sent again, and Redis refuses every batch of it.
	if err := os.WriteFile(files[0], saved, 0o644); err != nil {
		t.Fatal(err)
	}
	r3 := newRecorder(t, srv, timeseries.Config{SpillDir: dir, FlushInterval: time.Hour})
	flush(t, r3)
	assertSums(t, srv, "", "hits", 100)
	assertSums(t, srv, "", "GET /y", 100)
	assertLat(t, serverDo(srv), "hits", 100)
	assertLat(t, serverDo(srv), "GET /y", 100)
}

// A torn or foreign spill file is set aside and reported, never sent in
// part and never a crash.
func TestBadSpillFilesSetAside(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	r1 := newRecorder(t, srv, timeseries.Config{SpillDir: dir, FlushInterval: time.Hour, FlushTimeout: 200 * time.Millisecond})
	c := mustCounter(t, r1, "hits")
	srv.Stop()
	for range 10 {
		c.Inc()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := r1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.spill"))
	if len(files) != 1 {
		t.Fatalf("spill files %v, want one", files)
	}
	good, _ := os.ReadFile(files[0])
	cases := map[string][]byte{
		"torn.spill":    good[:len(good)/2],
		"garbage.spill": []byte("\x00\x01not json"),
		"edited.spill":  []byte(strings.Replace(string(good), `"deltas":[1`, `"deltas":[9`, 1)),
		"empty.spill":   {},
	}
	if err := os.Remove(files[0]); err != nil {
		t.Fatal(err)
	}
	for name, data := range cases {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv.Restart()
	var mu sync.Mutex
	var reported []string
	r2 := newRecorder(t, srv, timeseries.Config{SpillDir: dir, FlushInterval: time.Hour, OnError: func(err error) {
		mu.Lock()
		reported = append(reported, err.Error())
		mu.Unlock()
	}})
	flush(t, r2)
	if got := srv.Do("EXISTS", "count:5:hits"); got.(int64) != 0 {
		t.Error("a bad spill file was sent")
	}
	for name := range cases {
		if _, err := os.Stat(filepath.Join(dir, name+".bad")); err != nil {
			t.Errorf("%s not set aside: %v", name, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != len(cases) {
		t.Errorf("reported %d errors, want %d: %q", len(reported), len(cases), reported)
	}
}
