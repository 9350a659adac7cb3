package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// TestAlertRulesFile: with ALERT_RULES the example runs the evaluator on
// the file's rules in place of the defaults; it takes the lease while it
// serves and gives it up at shutdown; a bad rule file stops it at start
// with an error naming the rule.
func TestAlertRulesFile(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "rules.json")
	os.WriteFile(good, []byte(`{"rules": [
  {"name": "AppAvailability", "kind": "availability", "series": "hits"},
  {"name": "AppLatency", "kind": "latency", "series": "hits", "threshold": "500ms"},
  {"name": "RedisDown", "kind": "health", "check": "redis_down"},
  {"name": "RouteAnomaly", "kind": "anomaly", "series": "*"}
]}`), 0o644)
	base, stop := startExample(t, srv, options{AlertRules: good})
	deadline := time.Now().Add(time.Minute)
	for {
		holder, _ := redis.String(srv.Do("GET", "{alerts}:lease"), nil)
		if holder != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the evaluator never took the lease")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The dashboard serves the evaluator's answer, and shows its banner.
	code, body := getBody(t, base+"/dashboard/api/alerts?transitions=0")
	if code != http.StatusOK || !strings.Contains(body, `"name":"AppAvailability"`) || !strings.Contains(body, `"name":"RedisDown"`) ||
		!strings.Contains(body, `"name":"RouteAnomaly"`) || strings.Contains(body, `"name":"PulseAppAvailability"`) {
		t.Errorf("dashboard api/alerts: %d %s, want the file's rules and no default one", code, body)
	}
	if _, page := getBody(t, base+"/dashboard/"); !strings.Contains(page, `id="alert-list"`) {
		t.Error("the dashboard has no alert banner with ALERT_RULES set")
	}
	// The recorder counts the requests slower than the latency rule's
	// threshold, so that the rule reads counts, not histograms.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if n, _ := redis.Int(srv.Do("HEXISTS", "pulse:slow", "500ms"), nil); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the recorder does not count the requests slower than the latency rule's 500ms")
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n, _ := redis.Int(srv.Do("EXISTS", "{alerts}:lease"), nil); n != 0 {
		t.Error("the lease outlived the example")
	}
	// The file's rules replaced the defaults; a file with no rules runs
	// none, and without ALERT_RULES the defaults run.
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(`{"rules": []}`), 0o644)
	for _, tc := range []struct {
		file string
		want []string
	}{{empty, nil}, {"", defaultRuleNames()}} {
		base, stop = startExample(t, srv, options{AlertRules: tc.file})
		if got := readAlerts(t, base).ruleNames(); !slices.Equal(got, tc.want) {
			t.Errorf("ALERT_RULES=%q: api/alerts lists %v, want %v", tc.file, got, tc.want)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"rules": [{"name": "Typo", "kind": "availabilty", "series": "hits"}]}`), 0o644)
	opts := options{AlertRules: bad, RedisURL: "redis://" + srv.Addr, DatabaseURL: "sqlite:" + filepath.Join(dir, "forum.db"), SpillDir: filepath.Join(dir, "spill")}
	err := run(context.Background(), opts, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), `"Typo"`) || !strings.Contains(err.Error(), "unknown kind") {
		t.Fatalf("run with a bad rule file: %v", err)
	}
}

// getBody is GET url's status and body.
func getBody(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// A stop with Redis away while the evaluator holds its lease (alerts
// are on by default): the evaluator leaves the lease to lapse, which the
// log says, and the stop still ends within the shutdown bound with no
// error, as it does without alerts.
func TestStopWithRedisAway(t *testing.T) {
	t.Parallel()
	faults := []struct {
		name  string
		fault func(*redistest.Server) (restore func())
	}{
		{"stopped", func(s *redistest.Server) func() { s.Stop(); return s.Restart }},
		{"paused", func(s *redistest.Server) func() { s.Pause(); return s.Resume }},
	}
	for _, tc := range faults {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			var logs syncBuffer
			base, stop := startExample(t, srv, options{Timeouts: timeouts{Shutdown: 4 * time.Second}, logTo: &logs})
			waitUntil(t, "the evaluator's lease", 10*time.Second, func() bool { return readAlerts(t, base).Health.Leader })
			get(t, base+"/posts/2", "", "")
			restore := tc.fault(srv)
			defer restore()
			began := time.Now()
			if err := stop(); err != nil {
				t.Fatalf("stop with Redis %s: %v, want a clean exit", tc.name, err)
			}
			// The bound is what is tested: a stop that waited on Redis would
			// take until stop's own 20 s. The 4 s past it are for a loaded
			// machine, which took 5.02 s once.
			if took := time.Since(began); took > 8*time.Second {
				t.Errorf("stop took %v, want within the 4 s shutdown bound and 4 s for a loaded machine", took)
			}
			if !strings.Contains(logs.String(), "alerts stopped without giving up their lease") {
				t.Errorf("the log does not say the lease was left to lapse:\n%s", logs.String())
			}
		})
	}
}
