package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildExample builds the example binary, as `make run` does.
func buildExample(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the example binary")
	}
	bin := filepath.Join(t.TempDir(), "example")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// process is the example binary running in a directory of its own.
type process struct {
	cmd  *exec.Cmd
	logs *syncBuffer
	// url is what its log says to open.
	url string
	// done receives the process's exit, once.
	done chan error
}

// exampleVars are the environment variables the example reads; a run
// here starts with none of them set, as `make run` on a fresh shell does.
var exampleVars = []string{"REDIS_URL", "DATABASE_URL", "ADDR", "SPILL_DIR", "ALERT_RULES", "ALERTMANAGER_URL",
	"DASHBOARD_USER", "DASHBOARD_PASSWORD", "TRUSTED_PROXIES", "REDIS_SERVER"}

// startBinary runs bin in a new directory with env added to a cleaned
// environment and waits until its log says where it listens.
func startBinary(t *testing.T, bin string, env ...string) *process {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Dir = t.TempDir()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(exampleVars, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	p := &process{cmd: cmd, logs: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	deadline := time.Now().Add(60 * time.Second)
	for p.url == "" {
		p.url = p.logValue("forum listening", "url")
		if time.Now().After(deadline) {
			t.Fatalf("the example did not listen within 60 s:\n%s", p.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p
}

// logValue is the value of key on the first log line with message msg.
func (p *process) logValue(msg, key string) string {
	re := regexp.MustCompile(`msg="?` + regexp.QuoteMeta(msg) + `"?[^\n]* ` + regexp.QuoteMeta(key) + `=("[^"]*"|\S+)`)
	m := re.FindStringSubmatch(p.logs.String())
	if m == nil {
		return ""
	}
	return strings.Trim(m[1], `"`)
}

// interrupt sends SIGINT, as Ctrl-C does, and fails t unless the process
// exits 0 within 15 s.
func (p *process) interrupt(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("exit after SIGINT: %v, want 0\n%s", err, p.logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("no exit within 15 s of SIGINT\n%s", p.logs.String())
	}
}

// alertsAnswer is the part of api/alerts the tests read.
type alertsAnswer struct {
	Rules []struct {
		Name   string `json:"name"`
		Alerts []struct {
			State  string            `json:"state"`
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	} `json:"rules"`
	Health struct {
		Leader    bool `json:"leader"`
		Receivers []struct {
			Name      string `json:"name"`
			Delivered int64  `json:"delivered"`
			Retries   int64  `json:"retries"`
		} `json:"receivers"`
	} `json:"health"`
}

// readAlerts reads the dashboard's api/alerts under base.
func readAlerts(t *testing.T, base string) alertsAnswer {
	t.Helper()
	code, body := getBody(t, strings.TrimSuffix(base, "/")+"/dashboard/api/alerts?transitions=0")
	var a alertsAnswer
	if code != http.StatusOK {
		t.Fatalf("api/alerts: %d %s", code, body)
	}
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatalf("api/alerts: %v: %s", err, body)
	}
	return a
}

// ruleNames are the names of the rules api/alerts lists.
func (a alertsAnswer) ruleNames() []string {
	var names []string
	for _, r := range a.Rules {
		names = append(names, r.Name)
	}
	return names
}

// state is the state of rule's alert of severity, "" if it has none.
func (a alertsAnswer) state(rule, severity string) string {
	for _, r := range a.Rules {
		for _, al := range r.Alerts {
			if r.Name == rule && al.Labels["severity"] == severity {
				return al.State
			}
		}
	}
	return ""
}

// exitedBySignal reports whether err is the exit of a process ended by
// sig.
func exitedBySignal(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}
