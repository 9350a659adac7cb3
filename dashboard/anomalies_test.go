package dashboard_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
)

// One fall seen in four series (a route, its 2xx class, the app's hits
// and its 2xx total) is one event under the route, with its direction,
// the other three inside it; a steady route makes none.
func TestAnomaliesAreEvents(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, Start: time.Now()})
	writeCounts(t, f, "GET /steady", 300, 121, steady(1))
	for i, name := range []string{"GET /falls", "GET /falls status:2xx", "hits", "status:2xx"} {
		fall := steady(uint64(10 + i))
		writeCounts(t, f, name, 300, 121, func(i int) int {
			if i >= 116 && i < 120 { // the last four closed buckets
				return 0
			}
			return fall(i)
		})
	}
	r := dashtest.Get(t, f.Root+"api/anomalies?precision=300&last=6")
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var an struct {
		Series int
		Events []struct {
			Series, Kind, Direction string
			Start                   int64
			Score                   *float64
			Related                 []struct{ Series, Direction string }
		}
	}
	if err := json.Unmarshal([]byte(r.Body), &an); err != nil {
		t.Fatal(err)
	}
	if an.Series != 5 || len(an.Events) != 1 {
		t.Fatalf("%d series scanned, events %+v, want one", an.Series, an.Events)
	}
	ev := an.Events[0]
	if ev.Series != "GET /falls" || ev.Direction != "down" || (ev.Kind != "drop" && ev.Kind != "level_shift") || ev.Score == nil || *ev.Score > -5 {
		t.Errorf("event %+v, want the fall of GET /falls, down, far out", ev)
	}
	related := map[string]bool{}
	for _, r := range ev.Related {
		related[r.Series] = r.Direction == "down"
	}
	if len(related) != 3 || !related["GET /falls status:2xx"] || !related["hits"] || !related["status:2xx"] {
		t.Errorf("related %+v, want the route's class, hits and status:2xx, each down", ev.Related)
	}
}
