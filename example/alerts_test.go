package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// TestAlertRulesFile: with ALERT_RULES the example runs the evaluator,
// which takes the lease while it serves and gives it up at shutdown; a
// bad rule file stops it at start with an error naming the rule.
func TestAlertRulesFile(t *testing.T) {
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
	deadline := time.Now().Add(10 * time.Second)
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
		!strings.Contains(body, `"name":"RouteAnomaly"`) {
		t.Errorf("dashboard api/alerts: %d %s", code, body)
	}
	if _, page := getBody(t, base+"/dashboard/"); !strings.Contains(page, `id="alert-list"`) {
		t.Error("the dashboard has no alert banner with ALERT_RULES set")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n, _ := redis.Int(srv.Do("EXISTS", "{alerts}:lease"), nil); n != 0 {
		t.Error("the lease outlived the example")
	}
	// Without ALERT_RULES there is nothing to show.
	base, stop = startExample(t, srv, options{})
	if code, body := getBody(t, base+"/dashboard/api/alerts"); code != http.StatusNotFound || !strings.Contains(body, `"error"`) {
		t.Errorf("dashboard api/alerts without ALERT_RULES: %d %s, want a JSON 404", code, body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
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
