package browsertest_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
)

const (
	steadyRoute = "GET /steady"
	breakRoute  = "GET /breaks"
	// failRoute is the 5xx class of steadyRoute, which surges: the table
	// marks steadyRoute for it.
	failRoute   = steadyRoute + " status:5xx"
	fcPrecision = 5
	fcHorizon   = 12 // forecast.js's horizon
)

// writeBuckets writes the 121 buckets of name at fcPrecision that end
// with the current one, as the recorder would have, count(i) hits in the
// i-th from the oldest. The clock stands at real time and the hashes
// carry no expiry, so the hour the test runs at does not matter.
func writeBuckets(t *testing.T, f *dashtest.Fixture, name string, count func(i int) int) {
	t.Helper()
	p := int64(fcPrecision)
	current := f.Clock.Now().Unix() / p * p
	args := []any{"count:" + strconv.FormatInt(p, 10) + ":" + name}
	for i := range 121 {
		args = append(args, current-int64(120-i)*p, count(i))
	}
	f.Srv.Do("HSET", args...)
	f.Srv.Do("ZADD", "known:", 0, strconv.FormatInt(p, 10)+":"+name)
}

// noisy is about 200 hits a bucket, with Poisson-like noise.
func noisy(seed uint64) func(int) int {
	rng := rand.New(rand.NewPCG(seed, seed))
	return func(int) int { return 200 + int(rng.NormFloat64()*14) }
}

// forecastFixture has a steady route whose 5xx answers surged tenfold,
// and one whose traffic fell to zero, both for their last four closed
// buckets.
func forecastFixture(t *testing.T) *dashtest.Fixture {
	t.Helper()
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, NoEntities: true, Start: time.Now(), Poll: 300 * time.Millisecond})
	writeBuckets(t, f, steadyRoute, noisy(1))
	falls := noisy(2)
	writeBuckets(t, f, breakRoute, func(i int) int {
		if i >= 116 && i < 120 {
			return 0
		}
		return falls(i)
	})
	fails := noisy(3)
	writeBuckets(t, f, failRoute, func(i int) int {
		if i >= 116 && i < 120 {
			return 10 * fails(i)
		}
		return fails(i) / 10
	})
	return f
}

type apiFlag struct {
	Series string
	Bucket int64
	Kind   string
}

// apiEvent is an event of api/anomalies as the list shows it: its root,
// its worst bucket, its kind.
type apiEvent struct {
	Series string
	Peak   int64
	Kind   string
}

// apiAnomalies is what api/anomalies answers the page's own request: its
// flags and its events.
func apiAnomalies(t *testing.T, f *dashtest.Fixture) ([]apiFlag, []apiEvent) {
	t.Helper()
	r := dashtest.Get(t, f.Root+"api/anomalies?precision=5&last=120")
	var an struct {
		Anomalies []apiFlag
		Events    []apiEvent
	}
	if err := json.Unmarshal([]byte(r.Body), &an); err != nil {
		t.Fatalf("api/anomalies: %d %s", r.Status, r.Body)
	}
	return an.Anomalies, an.Events
}

// apiMarks lists the flagged buckets of name's forecast history, in ms.
func apiMarks(t *testing.T, f *dashtest.Fixture, name string) []float64 {
	t.Helper()
	r := dashtest.Get(t, f.Root+"api/forecast/"+url.PathEscape(name)+"?precision=5&kind=hits&horizon=12")
	var fc struct {
		History []struct {
			Time    int64
			Anomaly *apiFlag
		}
	}
	if err := json.Unmarshal([]byte(r.Body), &fc); err != nil {
		t.Fatalf("api/forecast: %d %s", r.Status, r.Body)
	}
	marks := []float64{}
	for _, h := range fc.History {
		if h.Anomaly != nil {
			marks = append(marks, float64(h.Time*1000))
		}
	}
	return marks
}

// forecastChart is what a card's chart draws of its forecast.
type forecastChart struct {
	Names   []string
	Band95  int
	Band80  int
	Marks   []float64
	XMax    float64
	Tooltip string
}

const readForecastChart = `((name) => {
	const card = Array.from(document.querySelectorAll('#chart-grid .card')).find((c) => c.dataset.series === name);
	const o = echarts.getInstanceByDom(card.querySelector('.chart')).getOption();
	const byId = (id) => o.series.find((s) => s.id === id);
	const marks = byId('anomalies').data.map((d) => d.value[0]);
	const tip = marks.length ? o.tooltip[0].formatter([{ seriesId: 'complete', value: byId('anomalies').data[0].value }]) : '';
	return {
		names: o.series.map((s) => s.name),
		band95: byId('band95').data.filter((d) => d[1] !== null).length,
		band80: byId('band80').data.filter((d) => d[1] !== null).length,
		marks: marks, xMax: o.xAxis[0].max, tooltip: tip,
	};
})`

func TestForecastBands(t *testing.T) {
	browser := newBrowser(t)
	f := forecastFixture(t)
	flags, events := apiAnomalies(t, f)
	first := slices.IndexFunc(events, func(e apiEvent) bool { return e.Series == breakRoute })
	if first < 0 || !slices.ContainsFunc(flags, func(fl apiFlag) bool { return fl.Series == failRoute }) {
		t.Fatalf("api/anomalies %+v, %+v: the fall of %s and the surge of %s should be flagged", flags, events, breakRoute, failRoute)
	}

	tb := newTab(t, browser, 1400, 1300)
	tb.navigate(f.Root + "?precision=5")
	cardOpt := func(name string) string {
		return `(() => { const c = document.querySelector('#chart-grid .card[data-series="` + name + `"] .chart');
			return c && echarts.getInstanceByDom(c) && echarts.getInstanceByDom(c).getOption(); })()`
	}
	for _, name := range []string{steadyRoute, breakRoute} {
		tb.waitFor("the band of "+name, cardOpt(name)+` && `+cardOpt(name)+`.series.find((s) => s.id === 'band95').data.length > 0`)
	}
	tb.waitFor("the anomaly list", `document.querySelectorAll('#anomaly-list .anomaly-item').length > 0`)
	for _, name := range []string{breakRoute, steadyRoute} {
		tb.waitFor("the route mark of "+name, `document.querySelector('.red-row[data-route="`+name+`"] .red-flag')`)
	}

	current := f.Clock.Now().Unix() / fcPrecision * fcPrecision
	for _, name := range []string{steadyRoute, breakRoute} {
		var got forecastChart
		tb.eval(readForecastChart+`(`+strconv.Quote(name)+`)`, &got)
		for _, want := range []string{"95 % band", "80 % band", "expected", "anomalies"} {
			if !slices.Contains(got.Names, want) {
				t.Errorf("%s: chart series %v lack %q", name, got.Names, want)
			}
		}
		if got.Band95 < 100 || got.Band80 != got.Band95 {
			t.Errorf("%s: %d buckets of the 95 %% band and %d of the 80 %%, want most of the 132", name, got.Band95, got.Band80)
		}
		if want := float64((current + fcHorizon*fcPrecision) * 1000); got.XMax != want {
			t.Errorf("%s: x axis ends at %v, want the horizon's end %v", name, got.XMax, want)
		}
		if want := apiMarks(t, f, name); !slices.Equal(got.Marks, want) {
			t.Errorf("%s: marks on %v, the forecast flags %v", name, got.Marks, want)
		}
		if len(got.Marks) > 0 && !strings.Contains(got.Tooltip, "anomaly: ") {
			t.Errorf("%s: a flagged bucket's tooltip %q does not name the flag", name, got.Tooltip)
		}
	}

	// The table and the list say what api/anomalies says.
	var page struct {
		Flagged []string
		Items   []apiEvent
		Cut     bool
	}
	tb.eval(`(() => {
		const list = document.getElementById('anomaly-list'), panel = document.getElementById('anomalies');
		const items = Array.from(list.querySelectorAll('.anomaly-item'));
		const last = items[items.length - 1].getBoundingClientRect(), box = panel.getBoundingClientRect();
		return {
			flagged: Array.from(document.querySelectorAll('.red-row')).filter((r) => r.querySelector('.red-flag')).map((r) => r.dataset.route).sort(),
			items: items.map((b) => ({series: b.dataset.series, peak: Number(b.dataset.bucket), kind: b.dataset.kind})),
			cut: list.scrollHeight > list.clientHeight + 1 || last.bottom > box.bottom,
		};
	})()`, &page)
	var routes []string
	for _, fl := range flags {
		route, _, _ := strings.Cut(fl.Series, " status:")
		if !slices.Contains(routes, route) {
			routes = append(routes, route)
		}
	}
	slices.Sort(routes)
	if !slices.Equal(page.Flagged, routes) {
		t.Errorf("flagged rows %v, want %v", page.Flagged, routes)
	}
	if fmt.Sprint(page.Items) != fmt.Sprint(events) {
		t.Errorf("anomaly list %+v, api/anomalies' events %+v", page.Items, events)
	}
	if page.Cut {
		t.Error("the anomaly list scrolls inside its panel, or its last row is cut off")
	}
	writeScreenshotAs(t, tb, "dashboard-forecast.png")

	// The clock stands still: however many polls, each chart's forecast
	// and the anomalies were read once.
	polls := tb.count("api/overview")
	tb.waitFor("more polls", `document.getElementById('live').dataset.state === 'ok'`)
	for tb.count("api/overview") < polls+5 {
		time.Sleep(100 * time.Millisecond)
	}
	if fc, an := tb.count("api/forecast/"), tb.count("api/anomalies"); fc != 2 || an != 1 {
		t.Errorf("%d forecast and %d anomalies requests over five polls, want 2 and 1 (a route's class series is not charted)", fc, an)
	}

	// A click on the newest flag of breakRoute pins its series at the flagged bucket.
	tb.eval(`document.querySelector('#anomaly-list .anomaly-item[data-series="`+breakRoute+`"]').click(); true`, nil)
	pinned := `document.querySelector('#chart-grid .card[data-series="` + breakRoute + `"]')`
	tb.waitFor("the flagged series pinned", pinned+` && `+pinned+`.dataset.pinned === 'true' && `+pinned+`.classList.contains('focused') &&
		new URLSearchParams(location.search).getAll('series').includes(`+strconv.Quote(breakRoute)+`)`)
	var highlight string
	tb.eval(pinned+`.dataset.highlight`, &highlight)
	if highlight != strconv.FormatInt(events[first].Peak, 10) {
		t.Errorf("highlighted bucket %s, want the event's worst %d", highlight, events[first].Peak)
	}
	var area int
	tb.eval(`echarts.getInstanceByDom(`+pinned+`.querySelector('.chart')).getOption().series.find((s) => s.id === 'expected').markArea.data.length`, &area)
	if area != 2 {
		t.Errorf("%d shaded areas on the pinned chart, want the future and the flagged bucket", area)
	}
	writeScreenshotAs(t, tb, "dashboard-forecast-pinned.png")

	// Redis down as the next bucket opens: the page says so and keeps its
	// bands; back up, it reads the new bucket's forecasts and flags once.
	reads := tb.count("api/forecast/")
	f.Srv.Stop()
	f.Clock.Advance(fcPrecision * time.Second)
	tb.waitFor("the outage", `document.getElementById('live').dataset.state === 'error'`)
	for _, name := range []string{steadyRoute, breakRoute} {
		var n int
		tb.eval(cardOpt(name)+`.series.find((s) => s.id === 'band95').data.length`, &n)
		if n == 0 {
			t.Errorf("%s lost its band in the outage", name)
		}
	}
	f.Srv.Restart()
	tb.waitFor("the forecasts of the next bucket", `document.getElementById('live').dataset.state === 'ok'`)
	for tb.count("api/forecast/") < reads+2 || tb.count("api/anomalies") < 2 {
		time.Sleep(100 * time.Millisecond)
	}
	tb.waitFor("the band again", cardOpt(breakRoute)+`.series.find((s) => s.id === 'band95').data.length > 0`)
	if fc, an := tb.count("api/forecast/")-reads, tb.count("api/anomalies"); fc != 2 || an > 3 {
		t.Errorf("%d forecast and %d anomalies requests after one more bucket, want 2 and at most 3 in all (one failed)", fc, an)
	}
	tb.checkClean(f.Server.URL, true)
}

// count is how many requests the tab sent to URLs containing s.
func (tb *tab) count(s string) int {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	n := 0
	for _, u := range tb.requests {
		if strings.Contains(u, s) {
			n++
		}
	}
	return n
}
