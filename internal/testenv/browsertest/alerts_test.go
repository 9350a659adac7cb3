package browsertest_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/alert"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
	"github.com/pulse-dev/pulse/timeseries"
)

const (
	checkoutRoute = "GET /checkout"
	// hostileRoute is a route label that would run script if the banner
	// put it into HTML.
	hostileRoute = "GET /" + dashtest.ImgName
)

// alertRules: an SLO over every route, firing at once (its budget burns
// 33 times too fast over both windows), a slower one over the checkout
// that waits an hour before it fires, so it stays pending, and a latency
// SLO over the checkout, firing at once (a fifth of its requests are
// slower than 250 ms).
func alertRules() []alert.Rule {
	windows := func(severity string) []alert.Window {
		return []alert.Window{{Long: alert.Duration(5 * time.Minute), Short: alert.Duration(time.Minute), Burn: 10, Severity: severity}}
	}
	return []alert.Rule{
		{Name: "RouteSLO", Kind: alert.Availability, Series: alert.EveryRoute, Target: 99, Windows: windows("page")},
		{Name: "CheckoutBudget", Kind: alert.Availability, Series: checkoutRoute, Target: 99, Windows: windows("ticket"), For: alert.Duration(time.Hour)},
		{Name: "CheckoutLatency", Kind: alert.Latency, Series: checkoutRoute, Target: 99, Threshold: alert.Duration(slowThreshold), Windows: windows("page")},
	}
}

const slowThreshold = 250 * time.Millisecond

// recordSlow records, in every 5 s bucket from T0 to the open one at
// Now, slow of route's requests as slower than slowThreshold, as a
// recorder counting it does, and notes that recorders count it from T0.
func recordSlow(t *testing.T, f *dashtest.Fixture, route string, slow int) {
	var hits []dashtest.Hit
	for at := time.Duration(0); at <= dashtest.Now.Sub(dashtest.T0); at += 5 * time.Second {
		hits = append(hits, dashtest.Hit{Name: timeseries.SlowSeries(route, slowThreshold), At: at, N: slow})
	}
	f.Record(t, hits...)
	f.Srv.Do("HSET", timeseries.Schema{}.SlowKey(), timeseries.ThresholdText(slowThreshold), dashtest.T0.Unix())
}

// alertItem is one entry of the banner as the page shows it.
type alertItem struct {
	State, Name, Route, Series string
	Value, Since               string
	Window                     float64
}

const readAlertBanner = `({
	hidden: document.getElementById('alerts').hidden,
	count: document.getElementById('alert-count').hidden ? '' : document.getElementById('alert-count').textContent,
	countState: document.getElementById('alert-count').dataset.state,
	markup: document.querySelectorAll('#alerts img, #alerts script').length,
	items: Array.from(document.querySelectorAll('#alert-list .alert-item')).map((b) => ({
		state: b.dataset.state, name: b.querySelector('.alert-name').textContent,
		route: b.querySelector('.alert-route').textContent, series: b.dataset.series || '',
		value: b.querySelector('.alert-value').textContent, since: b.querySelector('.alert-since').textContent,
		window: Number(b.dataset.window),
	})),
})`

type alertBanner struct {
	Hidden     bool
	Count      string
	CountState string
	Markup     int
	Items      []alertItem
}

// TestAlertBanner: a real evaluator, on the fixture's Redis and clock,
// finds two routes failing a third of their requests; the dashboard,
// given its Handler, shows the firing and pending alerts at the top with
// their count in the header, the hostile route label as text. A click
// charts the alert's series at a precision holding its window, with the
// window marked. While Redis is down the banner hides; once the
// failures age out of the window, the alerts resolve and it goes.
func TestAlertBanner(t *testing.T) {
	browser := newBrowser(t)
	var ev *alert.Evaluator
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, NoEntities: true, Poll: 300 * time.Millisecond,
		Alerts: func(f *dashtest.Fixture) http.Handler {
			var err error
			ev, err = alert.New(alert.Config{Pool: f.Srv.Pool(), Clock: f.Clock, Rules: alertRules(), Interval: 200 * time.Millisecond, RouteRefresh: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			return ev.Handler()
		}})
	f.RecordFailing(t, checkoutRoute, 15, 5)
	f.RecordFailing(t, hostileRoute, 15, 5)
	recordSlow(t, f, checkoutRoute, 3)
	ctx, cancel := context.WithCancel(context.Background())
	go ev.Run(ctx)
	t.Cleanup(func() {
		cancel()
		_ = ev.Close(context.Background())
	})

	tb := newTab(t, browser, 1400, 1100)
	tb.navigate(f.Root + "?precision=300")
	tb.waitFor("the banner's four alerts", `document.querySelectorAll('#alert-list .alert-item').length === 4`)
	var got alertBanner
	tb.eval(readAlertBanner, &got)
	if got.Hidden || got.Count != "4 alerts" || got.CountState != "firing" || got.Markup != 0 {
		t.Errorf("banner hidden %v, header count %q (%s), %d elements made of data; want it shown, \"4 alerts\", firing, none",
			got.Hidden, got.Count, got.CountState, got.Markup)
	}
	// Firing ones first; those firing since the same evaluation in the
	// order the evaluator lists them, by rule, then key ('<' before
	// 'c'). Each value says what it is: a burn rate against the rate at
	// which its severity fires, the share of bad requests it stands for
	// and the window pair it was read over.
	want := []alertItem{
		{State: "firing", Name: "RouteSLO", Route: hostileRoute, Series: hostileRoute, Window: 300,
			Value: "burn rate 33.3× (pages at 10×) · 33.3 % errors over 5m and 1m"},
		{State: "firing", Name: "RouteSLO", Route: checkoutRoute, Series: checkoutRoute, Window: 300,
			Value: "burn rate 33.3× (pages at 10×) · 33.3 % errors over 5m and 1m"},
		{State: "firing", Name: "CheckoutLatency", Route: checkoutRoute, Series: checkoutRoute, Window: 300,
			Value: "p99 > 250ms for 20 % of requests over 5m and 1m · burn rate 20× (pages at 10×)"},
		{State: "pending", Name: "CheckoutBudget", Route: checkoutRoute, Series: checkoutRoute, Window: 300,
			Value: "burn rate 33.3× (opens a ticket at 10×) · 33.3 % errors over 5m and 1m"},
	}
	for i, w := range want {
		if i >= len(got.Items) {
			break
		}
		if g := got.Items[i]; g.State != w.State || g.Name != w.Name || g.Route != w.Route || g.Series != w.Series || g.Window != w.Window || g.Value != w.Value {
			t.Errorf("banner entry %d:\n  %+v\nwant\n  %+v", i, g, w)
		}
	}
	writeScreenshotAs(t, tb, "dashboard-alerts.png")

	// A click charts the checkout at 5 s buckets (300 s ones would show
	// the 5 min window as one bucket), its window marked up to the open
	// bucket's end.
	tb.eval(`document.querySelector('#alert-list .alert-item[data-series="`+checkoutRoute+`"]').click(); true`, nil)
	card := `document.querySelector('#chart-grid .card[data-series="` + checkoutRoute + `"]')`
	tb.waitFor("the alert's series charted", card+` && `+card+`.dataset.pinned === 'true' && `+card+`.classList.contains('focused') &&
		new URLSearchParams(location.search).get('precision') === '5' &&
		new URLSearchParams(location.search).getAll('series').includes(`+strconv.Quote(checkoutRoute)+`)`)
	end := (f.Clock.Now().Unix()/5*5 + 5) * 1000
	area := `echarts.getInstanceByDom(` + card + `.querySelector('.chart')).getOption().series.find((s) => s.id === 'expected').markArea.data
		.some((a) => a[0].xAxis === ` + strconv.FormatInt(end-300_000, 10) + ` && a[1].xAxis === ` + strconv.FormatInt(end, 10) + `)`
	tb.waitFor("the alert's window marked", area)
	writeScreenshotAs(t, tb, "dashboard-alerts-chart.png")

	// Redis down: api/alerts answers 503 and the banner and the count go
	// quietly, while the page's notice says its updates paused; back up,
	// they return.
	f.Srv.Stop()
	tb.waitFor("the banner hidden in the outage", `document.getElementById('alerts').hidden &&
		document.getElementById('alert-count').hidden && document.getElementById('live').dataset.state === 'error'`)
	f.Srv.Restart()
	tb.waitFor("the banner back", `!document.getElementById('alerts').hidden && document.getElementById('alert-count').textContent === '4 alerts' &&
		document.getElementById('live').dataset.state === 'ok'`)

	// Ten minutes on, no request failed within the window: every alert
	// resolves or falls back to inactive, and the banner goes.
	f.Clock.Advance(10 * time.Minute)
	tb.waitFor("the banner gone", `document.getElementById('alerts').hidden && document.getElementById('alert-count').hidden &&
		document.getElementById('live').dataset.state === 'ok'`)
	tb.checkClean(f.Server.URL, true)
}
