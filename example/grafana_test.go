package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/promtest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// grafanaDashboard is the part of promexport/grafana/pulse.json the test
// reads: every panel's queries.
type grafanaDashboard struct {
	Panels []struct {
		Title   string
		Targets []struct{ Expr string }
	}
}

// grafanaMacros are what Grafana puts in place of the dashboard's
// variables when it queries: the route variable's "All" and a rate
// window of a few scrapes.
var grafanaMacros = strings.NewReplacer(`$route`, `.*`, `$__rate_interval`, `1m`)

// TestGrafanaDashboard: a real Prometheus scrapes the example while it
// serves traffic, and every query of every panel of the shipped Grafana
// dashboard parses and returns data.
func TestGrafanaDashboard(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "promexport", "grafana", "pulse.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash grafanaDashboard
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t)
	base, _ := startExample(t, srv, options{})
	ctx, stopTraffic := context.WithCancel(context.Background())
	defer stopTraffic()
	go traffic(ctx, base)
	prom := promtest.Start(t, strings.TrimPrefix(base, "http://"))
	queries := 0
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			query := grafanaMacros.Replace(target.Expr)
			got := prom.WaitSamples(t, query, 60*time.Second)
			t.Logf("%s: %s: %d series, first %v = %g", p.Title, query, len(got), got[0].Metric, got[0].Value)
			queries++
		}
	}
	if queries < 8 {
		t.Errorf("the dashboard has %d queries, want every panel's", queries)
	}
}

// traffic requests a few of the forum's routes, a path no route matches
// among them, until ctx ends.
func traffic(ctx context.Context, base string) {
	paths := []string{"/posts", "/posts/1", "/api/posts", "/no-such-page", "/"}
	for i := 0; ctx.Err() == nil; i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+paths[i%len(paths)], nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}
