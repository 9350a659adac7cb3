package browsertest_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
	"github.com/pulse-dev/pulse/timeseries"
)

// visitorsFixture records two hours of hits at one a minute's worth per
// minute bucket, and seeds each bucket's visitors as the write path
// PFADDs them: bucket b holds visitors 3b..3b+v-1, so neighbours share
// some. It returns the window's keys, oldest first.
func visitorsFixture(t *testing.T) (*dashtest.Fixture, []any) {
	t.Helper()
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, NoEntities: true, Poll: 400 * time.Millisecond})
	hits, err := f.Rec.Counter("hits")
	if err != nil {
		t.Fatal(err)
	}
	schema := f.Store.Schema()
	current := timeseries.BucketStart(dashtest.Now.Unix(), 60)
	back := f.Clock.Now()
	var keys []any
	for b := range 120 {
		start := current - int64(119-b)*60
		wave := 1 + 0.5*math.Sin(float64(b)/10) + 0.2*math.Sin(float64(b)/3)
		f.Clock.Advance(time.Unix(start+1, 0).Sub(f.Clock.Now()))
		for range int(40 * wave) {
			hits.Inc()
		}
		key, _ := schema.VisitorKey(60, "hits", start)
		args := []any{key}
		for i := range int(12 * wave) {
			args = append(args, fmt.Sprint("visitor-", 3*b+i))
		}
		f.Srv.Do("PFADD", args...)
		keys = append(keys, key)
	}
	f.Clock.Advance(back.Sub(f.Clock.Now()))
	f.Flush(t)
	return f, keys
}

// visitorsView is what the page shows of the visitors.
type visitorsView struct {
	Strip string       `json:"strip"`
	Level string       `json:"level"`
	Line  [][2]float64 `json:"line"`
	Axis  bool         `json:"axis"`
	// OnAxis is the y axis the line is drawn on: the hits' (0) when
	// counting, its own (1) in hits per second.
	OnAxis int `json:"onAxis"`
	Hits   int `json:"hits"`
}

const readVisitors = `(() => {
	const card = document.querySelector('#chart-grid .card[data-series="hits"]');
	const o = echarts.getInstanceByDom(card.querySelector('.chart')).getOption();
	const line = o.series.find((s) => s.id === 'visitors');
	return {
		strip: document.getElementById('visitors').textContent,
		level: document.getElementById('stat-visitors').dataset.level || '',
		line: line ? line.data : [], axis: o.yAxis.length > 1 && o.yAxis[1].show !== false,
		onAxis: line ? line.yAxisIndex : -1,
		hits: o.series[0].data.length,
	};
})()`

func TestVisitors(t *testing.T) {
	browser := newBrowser(t)
	f, keys := visitorsFixture(t)
	union, err := redis.Int64(f.Srv.Do("PFCOUNT", keys...), nil)
	if err != nil {
		t.Fatal(err)
	}
	tb := newTab(t, browser, 1400, 900)
	tb.navigate(f.Root + "?precision=60")
	tb.waitFor("the visitors", `document.getElementById('visitors').textContent.includes('per visitor') &&
		document.querySelector('#chart-grid .card[data-series="hits"]')`)
	var got visitorsView
	tb.eval(readVisitors, &got)
	if want := grouped(union); !strings.HasPrefix(got.Strip, want) || !strings.Contains(got.Strip, "hits per visitor") {
		t.Errorf("status strip %q, want the union of the window's 120 buckets, %s, and hits per visitor", got.Strip, want)
	}
	if len(got.Line) != 120 || got.Axis || got.OnAxis != 0 || got.Hits != 119 {
		t.Fatalf("visitors line of %d points (on axis %d, own axis shown %v) beside %d complete buckets of hits, want 120 on the hits' axis and 119",
			len(got.Line), got.OnAxis, got.Axis, got.Hits)
	}
	for i, p := range got.Line {
		n, err := redis.Int64(f.Srv.Do("PFCOUNT", keys[i]), nil)
		if err != nil || p[1] != float64(n) {
			t.Errorf("bucket %d: the line shows %v visitors, Redis counts %d", i, p[1], n)
		}
	}
	writeScreenshotAs(t, tb, "dashboard-visitors.png")

	// In hits per second the visitors keep their counts, on an axis of
	// their own.
	tb.eval(`document.querySelector('#modes button[data-mode="rate"]').click(); true`, nil)
	tb.waitFor("the visitors' own axis", readVisitors+`.axis`)
	tb.eval(readVisitors, &got)
	if len(got.Line) != 120 || got.OnAxis != 1 {
		t.Errorf("in hits per second: %d points of visitors on axis %d, want 120 on axis 1", len(got.Line), got.OnAxis)
	}
	writeScreenshotAs(t, tb, "dashboard-visitors-rate.png")
	tb.eval(`document.querySelector('#modes button[data-mode="count"]').click(); true`, nil)

	// 5 s buckets keep no visitors, and an hour's have none recorded: the
	// strip says so quietly, and the line is gone.
	for _, tc := range []struct {
		button, says string
	}{{"5", "kept at 1 min"}, {"3600", "none recorded"}} {
		tb.eval(`document.querySelector('#precisions button[data-precision="`+tc.button+`"]').click(); true`, nil)
		// The strip and the chart are redrawn from separate reads: wait
		// for both, or the chart can still show the last precision's line.
		tb.waitFor("the strip and the chart at "+tc.button+" s", `document.getElementById('visitors').textContent.includes('`+tc.says+`') &&
			`+readVisitors+`.line.length === 0`)
		tb.eval(readVisitors, &got)
		if got.Level != "quiet" || len(got.Line) != 0 || got.Axis {
			t.Errorf("at %s s: strip %q (level %q), %d points of visitors, axis %v", tc.button, got.Strip, got.Level, len(got.Line), got.Axis)
		}
		writeScreenshotAs(t, tb, "dashboard-visitors-"+tc.button+"s.png")
	}
	for _, u := range tb.requested() {
		if strings.Contains(u, "/api/visitors/") && strings.Contains(u, "precision=5&") {
			t.Errorf("the page asked for visitors where none are kept: %s", u)
		}
	}
	tb.checkClean(f.Server.URL, false)
}

// grouped writes n as the page's en-US number format does: 12,345.
func grouped(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
