package redistest_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

func TestFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault func(*redistest.Server) func()
		// reply is how a write (SET) is answered during the fault.
		reply string
		// readsWork is whether a GET still succeeds during the fault.
		readsWork bool
	}{
		{"OOM", func(s *redistest.Server) func() { return s.Faults().OOM() }, "OOM command not allowed", true},
		{"ReadOnly", func(s *redistest.Server) func() { return s.Faults().ReadOnly() }, "READONLY You can't write", true},
		{"Busy", func(s *redistest.Server) func() { return s.Faults().Busy(5 * time.Second) }, "BUSY Redis is busy running a script", false},
		{"Loading", func(s *redistest.Server) func() { return s.Faults().Loading(time.Second) }, "LOADING Redis is loading", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t)
			s.Do("SET", "kept", "v")

			start := time.Now()
			restore := tt.fault(s)
			c, err := redis.Dial("tcp", s.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Do("SET", "new", "v")
			if err == nil || !strings.HasPrefix(err.Error(), tt.reply) {
				t.Fatalf("SET during %s: got %v, want an error starting %q", tt.name, err, tt.reply)
			}
			v, err := redis.String(c.Do("GET", "kept"))
			if tt.readsWork && (err != nil || v != "v") {
				t.Fatalf("GET during %s: %q, %v", tt.name, v, err)
			}
			if !tt.readsWork && (err == nil || !strings.HasPrefix(err.Error(), tt.reply)) {
				t.Fatalf("GET during %s: got %q, %v, want an error starting %q", tt.name, v, err, tt.reply)
			}

			restore()
			restore() // idempotent
			t.Logf("%s lasted %v", tt.name, time.Since(start))
			if got := s.Do("SET", "new", "v"); got != "OK" {
				t.Fatalf("SET after restore: %v", got)
			}
			if v, _ := redis.String(s.Do("GET", "kept"), nil); v != "v" {
				t.Fatalf("GET kept after restore: %q", v)
			}
		})
	}
}

// Loading must not outlast d by much: tests size their waits on it.
func TestLoadingDuration(t *testing.T) {
	s := redistest.Start(t)
	s.Do("SET", "k", "v")
	const d = 800 * time.Millisecond
	start := time.Now()
	restore := s.Faults().Loading(d)
	restore()
	if took := time.Since(start); took < d/2 || took > 5*d {
		t.Errorf("Loading(%v) then restore took %v", d, took)
	}
	if n, _ := redis.Int(s.Do("DBSIZE"), nil); n != 1 {
		t.Errorf("db 0 has %d keys after Loading, want 1", n)
	}
}

func TestKillRestartKeepsData(t *testing.T) {
	s := redistest.Start(t)
	if !strings.HasSuffix(s.Addr, ":"+strconv.Itoa(s.Port())) || s.Port() >= 55535 {
		t.Fatalf("Addr %s, Port %d", s.Addr, s.Port())
	}
	s.Do("SET", "k", "v")
	s.Kill()
	if _, err := redis.Dial("tcp", s.Addr, redis.DialConnectTimeout(200*time.Millisecond)); err == nil {
		t.Fatal("dial after Kill succeeded")
	}
	s.Restart()
	// No wait: Restart returns once the data is loaded.
	v, err := redis.String(s.Do("GET", "k"), nil)
	if v != "v" {
		t.Fatalf("GET after Kill and Restart: %q, %v", v, err)
	}
}

func TestStartWithArgs(t *testing.T) {
	s := redistest.StartWith(t, redistest.Options{Args: []string{"--maxmemory-policy", "allkeys-lru"}})
	v, _ := redis.Strings(s.Do("CONFIG", "GET", "maxmemory-policy"), nil)
	if len(v) != 2 || v[1] != "allkeys-lru" {
		t.Fatalf("maxmemory-policy: %v", v)
	}
	v, _ = redis.Strings(s.Do("CONFIG", "GET", "busy-reply-threshold"), nil)
	if len(v) != 2 || v[1] != "100" {
		t.Fatalf("busy-reply-threshold: %v", v)
	}
}
