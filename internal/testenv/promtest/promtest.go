// Package promtest runs a real Prometheus server for tests: Debian's
// prometheus binary on a free loopback port, with a temporary config and
// TSDB, scraping one target every second.
package promtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/proc"
)

// Server is a running Prometheus.
type Server struct{ p *proc.Process }

// Start runs prometheus scraping target (host:port, path /metrics) every
// second, with flags added to its command line; it is stopped when t
// ends. It fails t, naming the package to install, when there is no
// prometheus binary.
func Start(t *testing.T, target string, flags ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus not found: install Debian's prometheus package (apt-get install prometheus), as scripts/setup.sh does")
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: pulse\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := proc.Start(ctx, proc.Config{
		Binary: bin,
		Dir:    dir,
		Args: func(port int) []string {
			return append([]string{
				"--config.file=" + filepath.Join(dir, "prometheus.yml"),
				"--storage.tsdb.path=" + filepath.Join(dir, "data"),
				"--web.listen-address=127.0.0.1:" + strconv.Itoa(port),
				"--log.level=warn",
			}, flags...)
		},
		Ready: func(ctx context.Context, port int) error {
			_, err := proc.Get(ctx, fmt.Sprintf("http://127.0.0.1:%d/-/ready", port))
			return err
		},
		StartTimeout: 45 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return &Server{p: p}
}

// Sample is one element of an instant vector.
type Sample struct {
	Metric map[string]string
	Value  float64
}

// Query runs an instant query and returns its vector; a query Prometheus
// refuses is an error, an empty vector is not.
func (s *Server) Query(ctx context.Context, query string) ([]Sample, error) {
	body, err := proc.Get(ctx, "http://"+s.p.Addr()+"/api/v1/query?query="+url.QueryEscape(query))
	if err != nil {
		return nil, err
	}
	var ans struct {
		Status string
		Data   struct {
			ResultType string
			Result     []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		return nil, err
	}
	if ans.Status != "success" || ans.Data.ResultType != "vector" {
		return nil, fmt.Errorf("promtest: %s: unexpected answer %s", query, body)
	}
	var out []Sample
	for _, r := range ans.Data.Result {
		text, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("promtest: %s: value %q", query, text)
		}
		out = append(out, Sample{Metric: r.Metric, Value: v})
	}
	return out, nil
}

// WaitSamples repeats query until it answers at least one sample, and
// returns them; it fails t after limit, or at once if Prometheus refuses
// the query.
func (s *Server) WaitSamples(t *testing.T, query string, limit time.Duration) []Sample {
	t.Helper()
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err := s.Query(ctx, query)
		cancel()
		switch {
		case err != nil && strings.Contains(err.Error(), " 400 "):
			t.Fatalf("%s: %v", query, err)
		case err != nil:
			last = err
		case len(got) > 0:
			return got
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s: no sample within %v (last error %v)\nprometheus log:\n%s", query, limit, last, s.p.LogTail())
	return nil
}

// Wait is WaitSamples for a query of one sample, and returns its value.
func (s *Server) Wait(t *testing.T, query string, limit time.Duration) float64 {
	t.Helper()
	got := s.WaitSamples(t, query, limit)
	if len(got) != 1 {
		t.Fatalf("%s: %d samples, want 1: %v", query, len(got), got)
	}
	return got[0].Value
}
