package browsertest_test

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
)

// timed is one request of dashtest.RouteName the route fixture records: its
// duration, status and time after the fixture's start.
type timed struct {
	ms     int
	status int
	at     time.Duration
}

// routeTraffic is 1 to 40 ms in the first 5 s bucket, 20 to 79 ms in the
// second and 100 to 139 ms in the fifth; every tenth
// request is a 404 and every twenty-fifth a 500.
func routeTraffic() []timed {
	var out []timed
	add := func(from, to int, at time.Duration) {
		for ms := from; ms <= to; ms++ {
			status := 200
			switch {
			case len(out)%25 == 24:
				status = 500
			case len(out)%10 == 9:
				status = 404
			}
			out = append(out, timed{ms, status, at})
		}
	}
	add(1, 40, time.Second)
	add(20, 79, 6*time.Second)
	add(100, 139, 21*time.Second)
	return out
}

// routeFixture records routeTraffic through track, as the middlewares
// do, and leaves the clock at start+32s.
func routeFixture(t *testing.T) *dashtest.Fixture {
	t.Helper()
	start := time.Unix(time.Now().Unix()/60*60, 0)
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, NoEntities: true, Start: start})
	tr, err := adapter.HitsConfig[any]{Recorder: f.Rec, Routes: true, StatusClasses: true}.Meter(adapter.Glue[any]{})
	if err != nil {
		t.Fatal(err)
	}
	method, route, _ := strings.Cut(dashtest.RouteName, " ")
	for _, r := range routeTraffic() {
		f.Clock.Advance(start.Add(r.at).Sub(f.Clock.Now()))
		tr.Count(nil, method, route, r.status, time.Duration(r.ms)*time.Millisecond)
	}
	f.Clock.Advance(start.Add(32 * time.Second).Sub(f.Clock.Now()))
	f.Flush(t)
	return f
}

// routeCharts is what the pinned route's charts hold.
type routeCharts struct {
	P50    string     `json:"p50"`
	Lines  [][]any    `json:"lines"`
	Heat   [][3]any   `json:"heat"`
	Rows   []string   `json:"rows"`
	Errors [][][2]any `json:"errors"`
	XNames []string   `json:"xNames"`
}

const readRouteCharts = `(() => {
	const tr = document.querySelector('.red-row[aria-selected="true"]');
	const get = (id) => echarts.getInstanceByDom(document.getElementById(id)).getOption();
	const lat = get('durations-chart'), heat = get('heat-chart'), errs = get('errors-chart');
	return {
		p50: tr.children[3].textContent,
		lines: lat.series.map((s) => s.data),
		heat: heat.series[0].data,
		rows: heat.yAxis[0].data,
		errors: errs.series.map((s) => s.data),
		xNames: heat.xAxis[0].data,
	};
})()`

func TestRouteCharts(t *testing.T) {
	browser := newBrowser(t)
	f := routeFixture(t)
	var all []int
	for _, r := range routeTraffic() {
		all = append(all, r.ms)
	}
	slices.Sort(all)
	median := float64(all[tracktest.Rank(0.5, len(all))-1])

	tb := newTab(t, browser, 1400, 1500)
	tb.navigate(f.Root)
	sel := `document.querySelector('.red-row[data-route="` + dashtest.RouteName + `"]')`
	tb.waitFor("the route's row", sel+` && !`+sel+`.children[3].textContent.startsWith('–')`)
	tb.eval(sel+`.click(); true`, nil)
	tb.waitFor("the route's charts", `!document.getElementById('durations').hidden &&
		echarts.getInstanceByDom(document.getElementById('heat-chart')) &&
		echarts.getInstanceByDom(document.getElementById('heat-chart')).getOption().series[0].data.length > 0`)
	var got routeCharts
	tb.eval(readRouteCharts, &got)

	p50, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSuffix(got.P50, " ms"), ",", ""), 64)
	if err != nil || math.Abs(p50-median) > 0.05*median {
		t.Errorf("p50 cell %q, want %g ms within 5 %%", got.P50, median)
	}
	const buckets, rows = 120, 14
	for i, l := range got.Lines {
		if len(l) != buckets {
			t.Errorf("durations line %d: %d points, want %d", i, len(l), buckets)
		}
	}
	if len(got.Heat) != buckets*rows || len(got.Rows) != rows || len(got.XNames) != buckets {
		t.Errorf("heatmap: %d cells, %d rows, %d columns; want %d, %d, %d", len(got.Heat), len(got.Rows), len(got.XNames), buckets*rows, rows, buckets)
	}
	var cells float64
	for _, c := range got.Heat {
		if n, ok := c[2].(float64); ok {
			cells += n
		} else if c[2] != "-" {
			t.Errorf("heatmap cell %v: neither a count nor empty", c)
		}
	}
	if cells != float64(len(all)) {
		t.Errorf("heatmap cells add up to %g requests, want %d", cells, len(all))
	}
	if len(got.Errors) != 2 || len(got.Errors[0]) != buckets || len(got.Errors[1]) != buckets {
		t.Errorf("error-rate chart: %d lines, want 2 of %d points", len(got.Errors), buckets)
	}
	writeScreenshotAs(t, tb, "dashboard-route.png")
	tb.checkClean(f.Server.URL, false)
}
