package promexport_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The shipped SLO alerting rules pass Prometheus' own checks, and their
// unit tests (rules/pulse-slo.test.yml: synthetic series of errors and
// slow requests) show each alert firing and resolving when it should.
// A rules file whose threshold drifts fails here.
func TestSLORules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found: install Debian's prometheus package (apt-get install prometheus), as scripts/setup.sh does")
	}
	for _, args := range [][]string{
		{"check", "rules", "pulse-slo.rules.yml"},
		{"test", "rules", "pulse-slo.test.yml"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, promtool, args...)
		cmd.Dir = "rules"
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
	}
}

// The unit tests fail when a rule changes: a page threshold raised from
// 14.4 to 20 budgets no longer fires at 20.8 % slow.
func TestSLORulesTestsCatchDrift(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found: install Debian's prometheus package")
	}
	rules, err := os.ReadFile(filepath.Join("rules", "pulse-slo.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("rules", "pulse-slo.test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	drifted := strings.ReplaceAll(string(rules), "(14.4 * 0.01)", "(20 * 0.01)")
	if drifted == string(rules) {
		t.Fatal("the rules have no latency page threshold 14.4 * 0.01")
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"pulse-slo.rules.yml": drifted, "pulse-slo.test.yml": string(tests)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(promtool, "test", "rules", "pulse-slo.test.yml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("promtool test rules passed on drifted rules:\n%s", out)
	}
}
