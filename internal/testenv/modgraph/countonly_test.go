package modgraph

import (
	"path/filepath"
	"strings"
	"testing"
)

// notCounting are the packages an app that only counts must not link:
// the dashboard and what it draws and reads with, the forecasts, the
// alerts.
var notCounting = []string{
	"github.com/pulse-dev/pulse/dashboard", "github.com/pulse-dev/pulse/forecast",
	"github.com/pulse-dev/pulse/alert", "github.com/go-echarts/",
}

// TestCountOnlyLinksOnlyCounting: a program that counts with an adapter
// (the adapter, timeseries and the cleaner; no mount) links no package
// of the dashboard, the forecasts, the alerts or go-echarts. It logs the
// modules and packages of each such program, and of the same program
// without Pulse.
func TestCountOnlyLinksOnlyCounting(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod tidy for each adapter")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range consumers {
		t.Run(c.name, func(t *testing.T) {
			var imports []string
			if c.framework != "" {
				imports = append(imports, c.framework)
			}
			bareMods, barePkgs := graphs(t, root, nil, imports)
			mods, pkgs := graphs(t, root, c.modules, append(imports, c.adapter,
				"github.com/pulse-dev/pulse/timeseries", "github.com/pulse-dev/pulse/cleaner"))
			t.Logf("count-only: %d modules, %d packages linked (without Pulse: %d modules, %d packages)",
				len(mods), len(pkgs), len(bareMods), len(barePkgs))
			for _, p := range pkgs {
				for _, bad := range notCounting {
					if p == bad || strings.HasPrefix(p, strings.TrimSuffix(bad, "/")+"/") {
						t.Errorf("a count-only program links %s", p)
					}
				}
			}
		})
	}
}
