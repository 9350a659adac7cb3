package browsertest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
)

// Many incidents at once: the list shows each once, every row whole,
// the page growing with it rather than the list scrolling inside a
// fixed-height panel whose last row is cut off.
func TestAnomalyListUncut(t *testing.T) {
	browser := newBrowser(t)
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, NoEntities: true, Start: time.Now(), Poll: 300 * time.Millisecond})
	const n = 12
	for i := range n {
		falls := noisy(uint64(20 + i))
		writeBuckets(t, f, fmt.Sprintf("GET /falls/%d", i), func(k int) int {
			if k >= 116 && k < 120 {
				return 0
			}
			return falls(k)
		})
	}
	_, events := apiAnomalies(t, f)
	if len(events) != n {
		t.Fatalf("api/anomalies: %d events, want %d: %+v", len(events), n, events)
	}
	tb := newTab(t, browser, 1400, 900)
	tb.navigate(f.Root + "?precision=5")
	tb.waitFor("the anomaly list", fmt.Sprintf(`document.querySelectorAll('#anomaly-list .anomaly-item').length === %d`, n))
	var got struct {
		Rows, Whole int
		Scrolls     bool
	}
	tb.eval(`(() => {
		const list = document.getElementById('anomaly-list'), box = document.getElementById('anomalies').getBoundingClientRect();
		const rows = Array.from(list.querySelectorAll('.anomaly-item'));
		return {
			rows: rows.length,
			whole: rows.filter((r) => { const b = r.getBoundingClientRect(); return b.top >= box.top && b.bottom <= box.bottom; }).length,
			scrolls: list.scrollHeight > list.clientHeight + 1,
		};
	})()`, &got)
	if got.Rows != n || got.Whole != n || got.Scrolls {
		t.Errorf("%d rows, %d of them whole inside their panel, the list scrolling: %v; want all %d whole, no scrolling", got.Rows, got.Whole, got.Scrolls, n)
	}
	writeScreenshotAs(t, tb, "dashboard-anomalies.png")
}
