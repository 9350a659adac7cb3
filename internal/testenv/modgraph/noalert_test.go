package modgraph

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestForecastsLinkNoAlerts: the forecasts, and the dashboard that draws
// them, link no package of the alert engine; the anomaly detector lives
// on the alert side (alert/anomaly) and imports the forecasts instead.
func TestForecastsLinkNoAlerts(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"github.com/pulse-dev/pulse/dashboard", "github.com/pulse-dev/pulse/forecast/...", "github.com/pulse-dev/pulse/cleaner"} {
		cmd := exec.Command("go", "list", "-deps", pkg)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 5 {
			t.Fatalf("go list -deps %s: %d packages; not what this test expects", pkg, len(deps))
		}
		for _, d := range deps {
			if d == "github.com/pulse-dev/pulse/alert" || strings.HasPrefix(d, "github.com/pulse-dev/pulse/alert/") {
				t.Errorf("%s links %s", pkg, d)
			}
		}
	}
}
