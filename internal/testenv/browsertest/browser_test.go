package browsertest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
	"github.com/pulse-dev/pulse/timeseries"
)

const chromiumPath = "/usr/bin/chromium"

// newBrowser starts one headless Chromium for a test; each tab opens with
// newTab.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := exec.LookPath(chromiumPath); err != nil {
		t.Fatal("chromium not found at " + chromiumPath + ": install chromium (apt-get install chromium) or run make test")
	}
	if !dashboard.EchartsEmbedded() {
		t.Fatal("echarts.min.js was not embedded: run `make assets`, then test again")
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(browserCtx); err != nil {
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	return browserCtx
}

// tab is one browser tab with everything it reported.
type tab struct {
	t   *testing.T
	ctx context.Context

	mu         sync.Mutex
	consoleErr []string // console.error/assert calls, uncaught exceptions
	logErr     []string // browser log entries at error level (failed loads, CSP)
	requests   []string
	dialogs    []string
}

func newTab(t *testing.T, browser context.Context, width, height int64) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	tb := &tab{t: t, ctx: ctx}
	err := chromedp.Listen(ctx, func(ev any) {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				tb.consoleErr = append(tb.consoleErr, "console."+string(ev.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			tb.consoleErr = append(tb.consoleErr, "exception: "+msg)
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError {
				tb.logErr = append(tb.logErr, string(ev.Entry.Source)+": "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			tb.requests = append(tb.requests, ev.Request.URL)
		case *page.EventJavascriptDialogOpening:
			tb.dialogs = append(tb.dialogs, string(ev.Type)+": "+ev.Message)
			go func() { // a dialog blocks the page until answered
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			}()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// Count CSP violations the page would otherwise only log.
	_, err = chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__csp = []; document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatal(err)
	}
	return tb
}

func (tb *tab) navigate(url string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		tb.t.Fatalf("navigate %s: %v", url, err)
	}
}

// eval runs a script in the page and decodes its JSON result into out.
func (tb *tab) eval(script string, out any) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](script, func(p *runtime.EvaluateParams) {
		p.AwaitPromise = new(true)
	}))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", script, err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			tb.t.Fatalf("evaluate %s: decode %s: %v", script, raw, err)
		}
	}
}

// waitFor polls a JavaScript condition until it holds.
func (tb *tab) waitFor(what, cond string) {
	tb.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var ok bool
		tb.eval("Boolean("+cond+")", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var notice string
			tb.eval(`document.getElementById('notice').textContent`, &notice)
			tb.t.Fatalf("timed out waiting for %s (%s); notice: %q", what, cond, notice)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// requested is a copy of the URLs the page has asked for so far; the
// listener appends to them from its own goroutine.
func (tb *tab) requested() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return slices.Clone(tb.requests)
}

// checkClean fails on script errors, CSP violations, dialogs, and
// requests to any host but the app's. Failed loads are allowed only when
// allowFailedLoads is set (the outage phase of a test).
func (tb *tab) checkClean(appURL string, allowFailedLoads bool) {
	tb.t.Helper()
	var csp []string
	tb.eval(`window.__csp`, &csp)
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, e := range tb.consoleErr {
		tb.t.Errorf("page error: %s", e)
	}
	for _, e := range tb.logErr {
		// 422 is api/forecast's answer for a series with too little
		// history, which the page shows as a chart without a band.
		if strings.Contains(e, "status of 422") && strings.Contains(e, "/api/forecast/") {
			continue
		}
		if !allowFailedLoads || !strings.Contains(e, "Failed to load resource") {
			tb.t.Errorf("browser log error: %s", e)
		}
	}
	for _, v := range csp {
		tb.t.Errorf("CSP violation: %s", v)
	}
	for _, d := range tb.dialogs {
		tb.t.Errorf("a dialog opened: %s", d)
	}
	for _, u := range tb.requests {
		if !strings.HasPrefix(u, appURL+"/") && !strings.HasPrefix(u, "data:") {
			tb.t.Errorf("request beyond the app's host: %s", u)
		}
	}
	if len(tb.requests) == 0 {
		tb.t.Error("no requests seen: the network listener is not working")
	}
}

// chartCard is what the page's charts hold, read back from echarts.
type chartCard struct {
	Name     string       `json:"name"`
	Title    string       `json:"title"`
	Pinned   bool         `json:"pinned"`
	Complete [][2]float64 `json:"complete"`
	Partial  [][2]float64 `json:"partial"`
	XMin     float64      `json:"xMin"`
	XMax     float64      `json:"xMax"`
	Dashed   string       `json:"dashed"`
	Symbol   string       `json:"symbol"`
	// PartialSymbols is the symbol of each point of the open segment.
	PartialSymbols []string `json:"partialSymbols"`
}

const readCharts = `Array.from(document.querySelectorAll('#chart-grid .card')).map((card) => {
	const o = echarts.getInstanceByDom(card.querySelector('.chart')).getOption();
	return {
		name: card.dataset.series,
		title: card.querySelector('.card-title').textContent,
		pinned: card.dataset.pinned === 'true',
		complete: o.series[0].data,
		partial: o.series[1].data.map((d) => Array.isArray(d) ? d : d.value),
		partialSymbols: o.series[1].data.map((d) => Array.isArray(d) ? o.series[1].symbol : d.symbol),
		xMin: o.xAxis[0].min, xMax: o.xAxis[0].max,
		dashed: o.series[1].lineStyle.type, symbol: o.series[1].symbol,
	};
})`

func (tb *tab) charts() map[string]chartCard {
	tb.t.Helper()
	var cards []chartCard
	tb.eval(readCharts, &cards)
	out := map[string]chartCard{}
	for _, c := range cards {
		out[c.Name] = c
	}
	return out
}

// checkChartMatches compares a chart with the API's samples of the same
// series: every bucket, the still-open one drawn apart.
func checkChartMatches(t *testing.T, c chartCard, samples []timeseries.Sample, from, to, current int64) {
	t.Helper()
	// The axis runs on past the window over the forecast's horizon.
	if len(samples) < 2 {
		t.Fatalf("%s: %d samples, want a window", c.Name, len(samples))
	}
	end := to + fcHorizon*(samples[1].Time-samples[0].Time)
	if c.XMin != float64(from*1000) || c.XMax != float64(end*1000) {
		t.Errorf("%s: x axis %v..%v, want %d..%d", c.Name, c.XMin, c.XMax, from*1000, end*1000)
	}
	var drawn [][2]float64
	drawn = append(drawn, c.Complete...)
	if n := len(c.Partial); n > 0 {
		drawn = append(drawn, c.Partial[n-1])
	}
	if len(drawn) != len(samples) {
		t.Fatalf("%s: chart has %d buckets, API %d", c.Name, len(drawn), len(samples))
	}
	for i, s := range samples {
		if drawn[i] != [2]float64{float64(s.Time * 1000), float64(s.Count)} {
			t.Fatalf("%s: bucket %d: chart %v, API %v", c.Name, i, drawn[i], s)
		}
	}
	last := samples[len(samples)-1]
	if last.Time == current {
		if len(c.Partial) != 2 || c.Partial[1][0] != float64(current*1000) || c.Partial[0] != c.Complete[len(c.Complete)-1] {
			t.Errorf("%s: the open bucket is not drawn as its own segment: %v", c.Name, c.Partial)
		}
		if c.Dashed != "dashed" || fmt.Sprint(c.PartialSymbols) != "[none emptyCircle]" {
			t.Errorf("%s: open bucket drawn %q with symbols %v, want dashed with a hollow dot at its end", c.Name, c.Dashed, c.PartialSymbols)
		}
	}
}

// richTraffic records 10 minutes of forum-like traffic as the Hits
// middleware would (hits, route, status class), deterministic.
func richTraffic(t *testing.T, f *dashtest.Fixture) {
	t.Helper()
	routes := []struct {
		name   string
		weight float64
	}{
		{"GET /posts/:id", 9}, {"GET /", 6}, {"GET /static/*", 4}, {"GET /users/:id", 3},
		{"GET /search", 2}, {"POST /posts", 1.2}, {"POST /login", 0.8}, {"DELETE /posts/:id", 0.5},
	}
	counter := func(name string) *timeseries.Counter {
		c, err := f.Rec.Counter(name)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	hits := counter("hits")
	status := map[int]*timeseries.Counter{2: counter("status:2xx"), 3: counter("status:3xx"), 4: counter("status:4xx"), 5: counter("status:5xx")}
	rng := rand.New(rand.NewPCG(7, 11))
	back := f.Clock.Now()
	for b := 0; b < 120; b++ {
		at := dashtest.Now.Add(-time.Duration(119-b) * 5 * time.Second)
		f.Clock.Advance(at.Sub(f.Clock.Now()))
		wave := 1 + 0.55*math.Sin(float64(b)/12) + 0.25*math.Sin(float64(b)/4)
		if b > 80 && b < 86 {
			wave *= 2.2 // a burst
		}
		if b == 119 {
			wave *= 0.4 // the open bucket is two seconds old
		}
		for _, r := range routes {
			route := counter(r.name)
			n := int(r.weight * wave * (0.6 + 0.8*rng.Float64()))
			for range n {
				class := 2
				switch x := rng.Float64(); {
				case x < 0.01:
					class = 5
				case x < 0.06:
					class = 4
				case x < 0.12 && strings.HasPrefix(r.name, "POST"):
					class = 3
				}
				f.Rec.Record(hits, route, status[class])
			}
		}
	}
	f.Clock.Advance(back.Sub(f.Clock.Now()))
	f.Flush(t)
}

// TestBrowser drives the page in headless Chromium against a real Redis.
func TestBrowser(t *testing.T) {
	browser := newBrowser(t)

	// Posts 12 and 31 have names (one of them markup, which must show as
	// text); the others are shown by id.
	labels := func(_ context.Context, kind string, ids []int64) (map[int64]string, error) {
		names := map[int64]string{12: "hello world", 31: "<b>bold</b>"}
		out := map[int64]string{}
		for _, id := range ids {
			if n, ok := names[id]; ok && kind == "post" {
				out[id] = n
			}
		}
		return out, nil
	}
	rich := dashtest.New(t, dashtest.Options{NoTraffic: true, Title: "Pulse forum", Poll: 400 * time.Millisecond, Labels: labels})
	richTraffic(t, rich)
	rich.Record(t, dashtest.Hit{Name: dashtest.ImgName, At: 10 * time.Minute, N: 2},
		dashtest.Hit{Name: dashtest.ScriptName, At: 9 * time.Minute, N: 3})
	rich.Ents.Set("post", 12, map[string]int64{"views": 95, "likes": 14, "replies": 6})
	rich.Ents.Set("post", 31, map[string]int64{"views": 61, "likes": 9})
	rich.Ents.Set("post", 5, map[string]int64{"views": 22, "replies": 1})

	t.Run("charts match the API", func(t *testing.T) {
		tb := newTab(t, browser, 1400, 900)
		tb.navigate(rich.Root)
		tb.waitFor("the busiest charts", `document.querySelectorAll('#chart-grid .card').length === 6 && document.getElementById('live').dataset.state === 'ok'`)
		ov := dashtest.GetOverview(t, rich.Root+"api/overview?precision=5")
		charts := tb.charts()
		if len(charts) != 6 {
			t.Fatalf("%d charts, want the 6 busiest", len(charts))
		}
		for _, s := range ov.Top {
			c, ok := charts[s.Name]
			if !ok {
				t.Errorf("no chart of %s", s.Name)
				continue
			}
			checkChartMatches(t, c, s.Samples, ov.From, ov.To, ov.Current)
		}
		hitsChart := charts["hits"]
		if len(hitsChart.Complete) != 119 || hitsChart.Title != "hits" {
			t.Errorf("hits chart: %d complete buckets, title %q", len(hitsChart.Complete), hitsChart.Title)
		}

		// The status strip shows the recorder's health.
		var strip map[string]string
		tb.eval(`({redis: document.getElementById('redis-state').textContent,
			flush: document.getElementById('last-flush').textContent,
			pending: document.getElementById('pending-hits').textContent,
			dropped: document.getElementById('dropped-hits').textContent,
			series: document.getElementById('series-count').textContent})`, &strip)
		h := rich.Rec.Health()
		// The page ages the flush by the server's clock at its last
		// overview plus the real time since, so a loaded machine between
		// the two reads shows a few seconds.
		if strip["redis"] != "up" || !recentFlush.MatchString(strip["flush"]) || strip["pending"] != "0" || strip["dropped"] != "0" ||
			strip["series"] != fmt.Sprint(h.Series) {
			t.Errorf("status strip %v, health %+v", strip, h)
		}

		// The entity panel lists the most-viewed posts and looks one up.
		tb.waitFor("the entity top list", `document.querySelectorAll('#entity-top li').length === 6`)
		var top []string
		tb.eval(`Array.from(document.querySelectorAll('#entity-top li')).map(li => li.querySelector('.id').textContent + '=' + li.querySelector('.value').textContent)`, &top)
		if got := strings.Join(top, " "); got != `"hello world" (#12)=95 "<b>bold</b>" (#31)=61 #3=40 #5=22 #7=12 #9=12` {
			t.Errorf("top posts by views: %s", got)
		}
		tb.eval(`document.getElementById('entity-id').value = '12'; document.querySelector('#entity-lookup button').click(); true`, nil)
		tb.waitFor("the lookup result", `document.querySelector('#entity-result table')`)
		var rows []string
		tb.eval(`Array.from(document.querySelectorAll('#entity-result tr')).map(tr => tr.textContent)`, &rows)
		if got := strings.Join(rows, " "); got != "views95 replies6 likes14 favorites0" {
			t.Errorf("lookup of post 12: %s", got)
		}

		writeScreenshot(t, tb)
		tb.checkClean(rich.Server.URL, false)
	})

	t.Run("hostile names stay text", func(t *testing.T) {
		tb := newTab(t, browser, 1200, 900)
		tb.navigate(rich.Root)
		tb.waitFor("the series list", `document.querySelectorAll('#series-list .series-item').length > 10`)
		// Pin both through the finder, as a user would.
		for _, name := range []string{dashtest.ImgName, dashtest.ScriptName} {
			js, _ := json.Marshal(name)
			tb.eval(`Array.from(document.querySelectorAll('#series-list .series-item')).find(b => b.dataset.series === `+string(js)+`).click(); true`, nil)
		}
		tb.waitFor("the pinned charts", `document.querySelectorAll('#chart-grid .card[data-pinned="true"]').length === 2`)
		charts := tb.charts()
		for _, name := range []string{dashtest.ImgName, dashtest.ScriptName} {
			c, ok := charts[name]
			if !ok || c.Title != name || !c.Pinned {
				t.Errorf("pinned chart of %q: %+v", name, c)
			}
		}
		var inert struct {
			Imgs, Scripts int
			Listed        []string
			Shown         []bool
		}
		tb.eval(`({imgs: document.querySelectorAll('img').length,
			scripts: document.querySelectorAll('script').length,
			listed: Array.from(document.querySelectorAll('#series-list .name')).map(n => n.textContent),
			shown: Array.from(document.querySelectorAll('.card[data-pinned="true"] .card-title')).map(e => e.getBoundingClientRect().width > 20)})`, &inert)
		if fmt.Sprint(inert.Shown) != "[true true]" {
			t.Errorf("pinned titles not on screen: %v", inert.Shown)
		}
		if inert.Imgs != 0 || inert.Scripts != 3 {
			t.Errorf("the names became markup: %d img, %d script elements", inert.Imgs, inert.Scripts)
		}
		if !strings.Contains(strings.Join(inert.Listed, "\n"), dashtest.ImgName) || !strings.Contains(strings.Join(inert.Listed, "\n"), dashtest.ScriptName) {
			t.Errorf("names not listed as text: %q", inert.Listed)
		}
		// Hovering a chart draws its tooltip on the canvas, not as HTML.
		tb.eval(`(() => { const c = echarts.getInstanceByDom(document.querySelector('#chart-grid .card .chart'));
			c.dispatchAction({type: 'showTip', seriesIndex: 0, dataIndex: 5}); return true; })()`, nil)
		// A card's star unpins its series, and the URL follows.
		js, _ := json.Marshal(dashtest.ScriptName)
		tb.eval(`document.querySelector('#chart-grid .card[data-series='+JSON.stringify(`+string(js)+`)+'] .pin').click(); true`, nil)
		tb.waitFor("the unpinned chart", `document.querySelectorAll('#chart-grid .card[data-pinned="true"]').length === 1 &&
			new URLSearchParams(location.search).getAll('series').length === 1`)
		tb.checkClean(rich.Server.URL, false)
		// Pins persist for the next visit; unpin them for the other tabs.
		tb.eval(`localStorage.clear(); true`, nil)
	})

	t.Run("precision switch", func(t *testing.T) {
		tb := newTab(t, browser, 1200, 900)
		tb.navigate(rich.Root)
		tb.waitFor("5 s charts", `document.querySelectorAll('#chart-grid .card').length === 6 && document.getElementById('live').dataset.state === 'ok'`)
		before := tb.charts()["hits"]
		if err := chromedp.Do(tb.ctx, chromedp.Click(chromedp.CSS(`button[data-precision="60"]`))); err != nil {
			t.Fatal(err)
		}
		tb.waitFor("1 min charts", `(() => { const c = document.querySelector('#chart-grid .card[data-series="hits"] .chart');
			const d = c && echarts.getInstanceByDom(c).getOption().series[0].data;
			return d && d.length > 1 && d[1][0] - d[0][0] === 60000; })()`)
		after := tb.charts()["hits"]
		ov := dashtest.GetOverview(t, rich.Root+"api/overview?precision=60")
		checkChartMatches(t, after, ov.Top[0].Samples, ov.From, ov.To, ov.Current)
		if after.XMin == before.XMin || fmt.Sprint(after.Complete) == fmt.Sprint(before.Complete) {
			t.Error("switching precision did not change the data")
		}
		var pressed string
		tb.eval(`document.querySelector('button[aria-pressed="true"]').dataset.precision`, &pressed)
		if pressed != "60" {
			t.Errorf("pressed button %s, want 60", pressed)
		}
		tb.eval(`localStorage.clear(); true`, nil)
		tb.checkClean(rich.Server.URL, false)
	})

	t.Run("the URL holds the view", func(t *testing.T) {
		tb := newTab(t, browser, 1200, 900)
		pin, _ := json.Marshal(dashtest.ImgName)
		tb.navigate(rich.Root + "?precision=60&mode=rate&series=" + url.QueryEscape(dashtest.ImgName))
		tb.waitFor("1 min charts", `(() => { const c = document.querySelector('#chart-grid .card[data-series="hits"] .chart');
			const d = c && echarts.getInstanceByDom(c).getOption().series[0].data;
			return d && d.length > 1 && d[1][0] - d[0][0] === 60000; })()`)
		var view struct {
			Precision, Mode string
			Pinned          bool
		}
		tb.eval(`({precision: document.querySelector('#precisions button[aria-pressed="true"]').dataset.precision,
			mode: document.querySelector('#modes button[aria-pressed="true"]').dataset.mode,
			pinned: !!Array.from(document.querySelectorAll('#chart-grid .card[data-pinned="true"]')).find(c => c.dataset.series === `+string(pin)+`)})`, &view)
		if view.Precision != "60" || view.Mode != "rate" || !view.Pinned {
			t.Errorf("view from the URL: %+v", view)
		}
		// Rate mode draws hits per second: a complete bucket's count over 60 s.
		ov := dashtest.GetOverview(t, rich.Root+"api/overview?precision=60")
		c := tb.charts()["hits"]
		for i, smp := range ov.Top[0].Samples[:len(c.Complete)] {
			if want := float64(smp.Count) / 60; math.Abs(c.Complete[i][1]-want) > 1e-9 {
				t.Fatalf("bucket %d: %v per second, want %v", i, c.Complete[i][1], want)
			}
		}
		writeScreenshotAs(t, tb, "dashboard-rate.png")
		// A choice made on the page goes into the URL.
		if err := chromedp.Do(tb.ctx, chromedp.Click(chromedp.CSS(`button[data-precision="300"]`))); err != nil {
			t.Fatal(err)
		}
		tb.waitFor("the URL to follow", `new URLSearchParams(location.search).get('precision') === '300'`)
		tb.checkClean(rich.Server.URL, false)
	})

	t.Run("zoom", func(t *testing.T) {
		tb := newTab(t, browser, 1200, 900)
		tb.navigate(rich.Root + "?precision=5")
		tb.waitFor("the charts", `document.querySelectorAll('#chart-grid .card').length === 6 && document.getElementById('live').dataset.state === 'ok'`)
		const extents = `Array.from(document.querySelectorAll('#chart-grid .card .chart')).map((el) =>
			echarts.getInstanceByDom(el).getModel().getComponent('xAxis', 0).axis.scale.getExtent())`
		var before [][2]float64
		tb.eval(extents, &before)
		// Wheel over the first chart, as a user zooms in.
		var box struct{ X, Y float64 }
		tb.eval(`(() => { const r = document.querySelector('#chart-grid .card .chart').getBoundingClientRect();
			return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`, &box)
		for range 4 {
			if _, err := chromedp.Call(tb.ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{
				Type: input.DispatchMouseEventTypeMouseWheel, X: box.X, Y: box.Y, DeltaY: -240,
				DeltaX: 1e-9, // required, and a zero would be left out of the message

			}); err != nil {
				t.Fatal(err)
			}
		}
		tb.waitFor("the zoom in the URL", `new URLSearchParams(location.search).has('from')`)
		var after [][2]float64
		tb.eval(extents, &after)
		for i := range after {
			if after[i][1]-after[i][0] >= 0.9*(before[i][1]-before[i][0]) || after[i][0] < before[i][0] || after[i][1] > before[i][1] {
				t.Errorf("chart %d: visible window %v, before the zoom %v", i, after[i], before[i])
			}
			if after[i] != after[0] {
				t.Errorf("chart %d shows %v, the zoomed one %v: the charts are not connected", i, after[i], after[0])
			}
		}
		writeScreenshotAs(t, tb, "dashboard-zoomed.png")
		// The zoomed view is a link: opened again, it shows the same window.
		var link string
		tb.eval(`location.href`, &link)
		again := newTab(t, browser, 1200, 900)
		again.navigate(link)
		again.waitFor("the charts", `document.querySelectorAll('#chart-grid .card').length === 6 && document.getElementById('live').dataset.state === 'ok'`)
		var reopened [][2]float64
		again.eval(extents, &reopened)
		if math.Abs(reopened[0][0]-after[0][0]) > 1000 || math.Abs(reopened[0][1]-after[0][1]) > 1000 {
			t.Errorf("reopened link shows %v, the zoomed page %v", reopened[0], after[0])
		}
		tb.checkClean(rich.Server.URL, false)
	})

	t.Run("live updates and outages", func(t *testing.T) {
		f := dashtest.New(t, dashtest.Options{Poll: 300 * time.Millisecond})
		tb := newTab(t, browser, 1200, 900)
		tb.navigate(f.Root)
		tb.waitFor("the charts", `document.querySelector('#chart-grid .card[data-series="hits"]') && document.getElementById('live').dataset.state === 'ok'`)
		tb.eval(`window.__sameDocument = true; true`, nil)
		const lastPoint = `(() => { const d = echarts.getInstanceByDom(document.querySelector('#chart-grid .card[data-series="hits"] .chart')).getOption().series[1].data; return d.length ? d[d.length - 1] : null; })()`
		var p [2]float64
		tb.eval(lastPoint, &p)
		if p != [2]float64{1700000600000, 4} {
			t.Fatalf("open bucket %v, want 4 hits at T0+600", p)
		}

		// New hits in the open bucket show up without a reload.
		f.Record(t, dashtest.Hit{Name: "hits", At: 10*time.Minute + 3*time.Second, N: 5})
		tb.waitFor("the new hits", lastPoint+`[1] === 9`)
		// The clock moves on: the bucket closes and a new one opens.
		f.Clock.Advance(5 * time.Second)
		f.Record(t, dashtest.Hit{Name: "hits", At: 10*time.Minute + 7*time.Second, N: 2})
		tb.waitFor("the next bucket", lastPoint+`[0] === 1700000605000 && `+lastPoint+`[1] === 2`)
		c := tb.charts()["hits"]
		if last := c.Complete[len(c.Complete)-1]; last != [2]float64{1700000600000, 9} {
			t.Errorf("the closed bucket %v, want 9 hits", last)
		}
		// A series that appears is charted too.
		f.Record(t, dashtest.Hit{Name: "GET /new", At: 10*time.Minute + 6*time.Second, N: 50})
		tb.waitFor("the new series", `document.querySelector('#chart-grid .card[data-series="GET /new"]')`)

		// Redis down: the API answers 503, the page says so and keeps its charts.
		f.Srv.Stop()
		tb.waitFor("the error notice", `!document.getElementById('notice').hidden && document.getElementById('notice').textContent.includes('HTTP 503')`)
		var state struct {
			Live  string
			Cards int
		}
		tb.eval(`({live: document.getElementById('live').dataset.state, cards: document.querySelectorAll('#chart-grid .card').length})`, &state)
		if state.Live != "error" || state.Cards < 3 {
			t.Errorf("during the outage: %+v", state)
		}
		f.Srv.Restart()
		tb.waitFor("the notice to clear", `document.getElementById('notice').hidden && document.getElementById('live').dataset.state === 'ok'`)

		// The server itself unreachable (restarting, say).
		f.Down.Store(true)
		tb.waitFor("the unreachable notice", `!document.getElementById('notice').hidden && document.getElementById('notice').textContent.includes('cannot be reached')`)
		f.Down.Store(false)
		tb.waitFor("the notice to clear again", `document.getElementById('notice').hidden`)

		var same bool
		tb.eval(`window.__sameDocument === true && performance.getEntriesByType('navigation').length === 1`, &same)
		if !same {
			t.Error("the page reloaded")
		}
		tb.checkClean(f.Server.URL, true)
	})

	t.Run("no entities, no health", func(t *testing.T) {
		f := dashtest.New(t, dashtest.Options{NoEntities: true, NoHealth: true})
		tb := newTab(t, browser, 900, 800)
		tb.navigate(f.Root)
		tb.waitFor("the charts", `document.querySelector('#chart-grid .card') && document.getElementById('live').dataset.state === 'ok'`)
		var text struct {
			Panel  bool
			Health string
		}
		tb.eval(`({panel: document.getElementById('entities') !== null, health: document.getElementById('health-note').textContent})`, &text)
		if text.Panel || !strings.Contains(text.Health, "No recorder health") {
			t.Errorf("an entity panel with no entities, or no health note: %+v", text)
		}
		tb.checkClean(f.Server.URL, false)
		for _, u := range tb.requested() {
			if strings.Contains(u, "/api/entities") || strings.Contains(u, "/api/health") {
				t.Errorf("the page asked for what is not configured: %s", u)
			}
		}
	})
}

// writeScreenshot saves the whole page as artifacts/dashboard.png at the
// root of the Pulse repository, for people to look at.
func writeScreenshot(t *testing.T, tb *tab) {
	t.Helper()
	writeScreenshotAs(t, tb, "dashboard.png")
}

func writeScreenshotAs(t *testing.T, tb *tab, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := filepath.Join("..", "..", "..", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(path)
	t.Logf("screenshot: %s", abs)
}

// recentFlush is the status strip's age of a flush a moment ago: seconds,
// as many as a loaded machine takes between the flush and the read.
var recentFlush = regexp.MustCompile(`^(just now|[1-5]?[0-9] s ago)`)
