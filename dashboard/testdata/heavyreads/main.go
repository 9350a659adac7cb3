// Command heavyreads serves the dashboard over the Redis at $REDIS_ADDR,
// sends it 16 concurrent overview reads of the heaviest legal kind, and
// prints the peak RSS they cost and their slowest answer as JSON. It runs
// in a process of its own, built without the race detector, so that the
// peak is the dashboard's alone (TestHeavyOverviewReads).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/timeseries"
)

type result struct {
	PeakRSS      int64   `json:"peak_rss_bytes"`
	SlowestMilli float64 `json:"slowest_ms"`
	Statuses     []int   `json:"statuses"`
	BodyBytes    int     `json:"body_bytes"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "heavyreads:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := os.Getenv("REDIS_ADDR")
	pool := &redis.Pool{MaxIdle: 32, Dial: func() (redis.Conn, error) {
		return redis.Dial("tcp", addr, redis.DialReadTimeout(5*time.Second), redis.DialWriteTimeout(5*time.Second))
	}}
	defer pool.Close()
	store, err := timeseries.NewStore(pool, timeseries.Schema{}, nil)
	if err != nil {
		return err
	}
	cfg := dashboard.Config{Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if v := os.Getenv("CONCURRENT_READS"); v != "" {
		if cfg.ConcurrentReads, err = strconv.Atoi(v); err != nil {
			return err
		}
	}
	if v := os.Getenv("TIMEOUT"); v != "" {
		if cfg.Timeout, err = time.ParseDuration(v); err != nil {
			return err
		}
	}
	h, err := dashboard.Handler(cfg)
	if err != nil {
		return err
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	q := url.Values{"precision": {"5"}, "last": {"120"}, "n": {"24"}}
	for i := range dashboard.MaxPinned {
		q.Add("series", fmt.Sprintf("GET /route/%04d", i*7))
	}
	target := func(i int) string {
		if os.Getenv("DISTINCT") != "" {
			// Windows that differ cannot share a read: each is its own.
			q.Set("last", strconv.Itoa(120-i))
		}
		return srv.URL + "/api/overview?" + q.Encode()
	}
	targets := make([]string, 16)
	for i := range targets {
		targets[i] = target(i)
	}

	runtime.GC()
	debug.FreeOSMemory()
	// Start the peak from here: what the reads cost, not the start-up.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return err
	}
	var (
		mu  sync.Mutex
		res result
		wg  sync.WaitGroup
	)
	start := make(chan struct{})
	for i := range 16 {
		wg.Go(func() {
			<-start
			t0 := time.Now()
			resp, err := http.Get(targets[i])
			status := 0
			n := 0
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				status, n = resp.StatusCode, len(b)
			}
			took := float64(time.Since(t0).Microseconds()) / 1000
			mu.Lock()
			res.Statuses = append(res.Statuses, status)
			res.SlowestMilli = max(res.SlowestMilli, took)
			res.BodyBytes = max(res.BodyBytes, n)
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return err
			}
			res.PeakRSS = kb * 1024
		}
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}
