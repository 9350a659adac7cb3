package browsertest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
	"github.com/pulse-dev/pulse/timeseries"
)

// The incident history lists a burst kept on its chart's window and an
// older incident whose buckets are gone; 24 h shows the recent one, 7 d
// both; clicking the recent one pins its series at its precision, and
// the older one pins nothing.
func TestIncidentHistoryPanel(t *testing.T) {
	browser := newBrowser(t)
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, NoEntities: true, Start: time.Now(), Poll: 300 * time.Millisecond})
	burst := noisy(7)
	writeBuckets(t, f, "GET /burst", func(k int) int {
		if k >= 110 && k < 113 {
			return 6 * burst(k)
		}
		return burst(k)
	})
	writeBuckets(t, f, "GET /steady", noisy(8))
	if _, events := apiAnomalies(t, f); len(events) != 1 || events[0].Series != "GET /burst" {
		t.Fatalf("api/anomalies: %+v, want the burst", events)
	}
	// An incident of three days ago at 1 min: kept, off every chart.
	records, ends := fromstore.IncidentKeys(timeseries.Schema{}, 60)
	old := f.Clock.Now().Add(-72*time.Hour).Unix() / 60 * 60
	id := fmt.Sprintf("%d:GET /checkout", old)
	f.Srv.Do("HSET", records, id, fmt.Sprintf(`{"app":"","series":"GET /checkout","related":"hits","precision":60,"kind":"drop",`+
		`"direction":"down","start":%d,"end":%d,"open":false,"bucket":%d,"observed":0,"expected":40,"lo95":20,"hi95":60,"score":-8}`, old, old+300, old+60))
	f.Srv.Do("ZADD", ends, old+300, id)

	tb := newTab(t, browser, 1400, 1000)
	tb.navigate(f.Root + "?precision=60")
	tb.waitFor("the last 24 h", `document.querySelectorAll('#incident-list .incident-item').length === 1`)
	tb.eval(`document.querySelector('#incident-range [data-range="604800"]').click()`, nil)
	tb.waitFor("the last 7 d", `document.querySelectorAll('#incident-list .incident-item').length === 2`)
	var rows []struct {
		Series   string
		InWindow string
	}
	tb.eval(`Array.from(document.querySelectorAll('#incident-list .incident-item')).map((b) => ({series: b.dataset.series, inWindow: b.dataset.inWindow}))`, &rows)
	if len(rows) != 2 || rows[0].Series != "GET /burst" || rows[0].InWindow != "true" || rows[1].Series != "GET /checkout" || rows[1].InWindow != "false" {
		t.Fatalf("rows %+v, want the burst in its window, then the checkout's drop out of it", rows)
	}
	writeScreenshotAs(t, tb, "dashboard-incidents.png")
	tb.eval(`document.querySelector('#incident-list .incident-item[data-series="GET /checkout"]').click()`, nil)
	tb.eval(`document.querySelector('#incident-list .incident-item[data-series="GET /burst"]').click()`, nil)
	tb.waitFor("the burst pinned at 5 s", `new URL(location.href).searchParams.get('precision') === '5' && !!document.querySelector('.card[data-series="GET /burst"]')`)
	var checkout bool
	tb.eval(`!!document.querySelector('.card[data-series="GET /checkout"]')`, &checkout)
	if checkout {
		t.Error("a row off its chart pinned its series")
	}
	writeScreenshotAs(t, tb, "dashboard-incident-pinned.png")
}
