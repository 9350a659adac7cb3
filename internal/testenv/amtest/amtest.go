// Package amtest runs a real Alertmanager for tests: Debian's
// prometheus-alertmanager on a free loopback port, gossip off, with a
// temporary config and data directory and group timings short enough
// for a test to see its notifications.
package amtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/proc"
)

// Server is a running Alertmanager.
type Server struct {
	p *proc.Process
	t *testing.T
}

// Start runs Alertmanager routing every alert to webhook, grouped by
// alertname, severity and route; with webhook "" it routes them nowhere,
// and a test reads them from its API (Alerts). It is stopped when t
// ends. It fails t, naming the package to install, when there is no
// prometheus-alertmanager binary.
func Start(t *testing.T, webhook string) *Server {
	t.Helper()
	bin, err := exec.LookPath("prometheus-alertmanager")
	if err != nil {
		t.Fatal("prometheus-alertmanager not found: install Debian's prometheus-alertmanager package, as scripts/setup.sh does")
	}
	dir := t.TempDir()
	receiver := "  - name: hook\n"
	if webhook != "" {
		receiver += fmt.Sprintf("    webhook_configs:\n      - url: %q\n        send_resolved: true\n", webhook)
	}
	cfg := "route:\n  receiver: hook\n  group_by: [alertname, severity, route]\n  group_wait: 200ms\n" +
		"  group_interval: 1s\n  repeat_interval: 1h\nreceivers:\n" + receiver
	if err := os.WriteFile(filepath.Join(dir, "am.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := proc.Start(ctx, proc.Config{
		Binary: bin,
		Dir:    dir,
		Args: func(port int) []string {
			return []string{
				"--config.file=" + filepath.Join(dir, "am.yml"),
				"--storage.path=" + filepath.Join(dir, "data"),
				"--web.listen-address=127.0.0.1:" + strconv.Itoa(port),
				"--cluster.listen-address=",
				"--log.level=warn",
			}
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
	return &Server{p: p, t: t}
}

// URL is the base URL a receiver posts to.
func (s *Server) URL() string { return "http://" + s.p.Addr() }

// Stop stops Alertmanager; its port refuses connections until Restart.
func (s *Server) Stop() { s.p.Stop() }

// Restart starts it again on the same port, with the alerts it stored.
func (s *Server) Restart() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.p.Restart(ctx); err != nil {
		s.t.Fatal(err)
	}
}

// Alert is an alert as Alertmanager's API v2 lists it.
type Alert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Status       struct {
		State string `json:"state"`
	} `json:"status"`
}

// Alerts lists the alerts Alertmanager holds (GET /api/v2/alerts).
func (s *Server) Alerts(ctx context.Context) ([]Alert, error) {
	body, err := proc.Get(ctx, s.URL()+"/api/v2/alerts")
	if err != nil {
		return nil, err
	}
	var out []Alert
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("amtest: alerts: %w", err)
	}
	return out, nil
}

// LogTail is the end of Alertmanager's log, for a failure message.
func (s *Server) LogTail() string { return s.p.LogTail() }
