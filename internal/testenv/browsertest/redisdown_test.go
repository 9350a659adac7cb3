package browsertest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/alert"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
)

// TestAlertBannerRedisDown: the dashboard's Redis, which the alerts'
// state lives in too, stops. The banner shows PulseRedisDown from the
// recorder's first failed flush, pending, then firing once its For has
// passed on the fixture's clock, each line with its value, unit and
// limit: the alert about the outage is seen during the outage.
func TestAlertBannerRedisDown(t *testing.T) {
	browser := newBrowser(t)
	var ev *alert.Evaluator
	const forText = "2s"
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, NoEntities: true, Poll: 300 * time.Millisecond,
		Alerts: func(f *dashtest.Fixture) http.Handler {
			var err error
			ev, err = alert.New(alert.Config{Pool: f.Srv.Pool(), Clock: f.Clock, Recorder: f.Rec, Interval: 200 * time.Millisecond,
				Rules: []alert.Rule{{Name: "PulseRedisDown", Kind: alert.Health, Check: alert.RedisDown, For: alert.Duration(2 * time.Second)}}})
			if err != nil {
				t.Fatal(err)
			}
			return ev.Handler()
		}})
	hits, _ := f.Rec.Counter(alert.App)
	f.Rec.Record(hits)
	f.Flush(t)
	ctx, cancel := context.WithCancel(context.Background())
	go ev.Run(ctx)
	t.Cleanup(func() {
		cancel()
		_ = ev.Close(context.Background())
	})

	tb := newTab(t, browser, 1400, 900)
	tb.navigate(f.Root)
	tb.waitFor("the page with no alert", `document.getElementById('alerts').hidden && document.getElementById('alert-count').hidden`)

	f.Srv.Stop()
	f.Rec.Record(hits)
	flushCtx, cancelFlush := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelFlush()
	if err := f.Rec.Flush(flushCtx); err == nil {
		t.Fatal("a flush succeeded with Redis stopped")
	}
	item := `document.querySelector('#alert-list .alert-item')`
	tb.waitFor("PulseRedisDown pending", `!document.getElementById('alerts').hidden && `+item+` !== null && `+
		item+`.dataset.state === 'pending' && `+item+`.querySelector('.alert-name').textContent === 'PulseRedisDown'`)
	f.Clock.Advance(3 * time.Second)
	tb.waitFor("PulseRedisDown firing", item+` !== null && `+item+`.dataset.state === 'firing' && document.getElementById('alert-count').dataset.state === 'firing'`)
	var got alertBanner
	tb.eval(readAlertBanner, &got)
	if len(got.Items) != 1 {
		t.Fatalf("banner %+v, want PulseRedisDown alone", got)
	}
	v := got.Items[0].Value
	for _, part := range []string{"last good flush ", "s ago", "Redis unreachable", "limit: a failed flush, for " + forText, "ticket"} {
		if !strings.Contains(v, part) {
			t.Errorf("banner line %q lacks %q", v, part)
		}
	}
	writeScreenshotAs(t, tb, "dashboard-redis-down.png")

	// Redis back: the hit held through the outage lands, and the
	// recorder's close at the end has nothing left to wait on.
	f.Srv.Restart()
	f.Flush(t)
}
