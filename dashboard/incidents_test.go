package dashboard_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
)

type apiIncidents struct {
	Total     int
	Next      *int64
	Incidents []struct {
		Series, Kind, Direction, App string
		Start, End, Peak             int64
		Score                        *float64
		InWindow                     bool `json:"in_window"`
	}
}

func getInto(t *testing.T, u string, v any) {
	t.Helper()
	r := dashtest.Get(t, u)
	if r.Status != http.StatusOK {
		t.Fatalf("%s: status %d: %s", u, r.Status, r.Body)
	}
	if err := json.Unmarshal([]byte(r.Body), v); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
}

// A burst is one incident: api/anomalies lists it, api/forecast marks its
// buckets with the same score, api/incidents lists it, and goes on
// listing it once its buckets have left the window.
func TestIncidentsOneRecordEveryView(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, Start: time.Now()})
	writeCounts(t, f, "GET /steady", 300, 121, steady(1))
	base := steady(3)
	writeCounts(t, f, "GET /burst", 300, 121, func(i int) int {
		if i >= 116 && i < 119 {
			return 5 * base(i)
		}
		return base(i)
	})
	var an struct {
		Events []struct {
			Series, Direction string
			Peak              int64
			Score             *float64
		}
	}
	getInto(t, f.Root+"api/anomalies?precision=300&last=12", &an)
	if len(an.Events) != 1 || an.Events[0].Series != "GET /burst" || an.Events[0].Direction != "up" || an.Events[0].Score == nil {
		t.Fatalf("events %+v, want the burst", an.Events)
	}
	ev := an.Events[0]
	var fc struct {
		History []struct {
			Time    int64
			Anomaly *struct{ Score *float64 }
		}
	}
	getInto(t, f.Root+"api/forecast/"+url.PathEscape("GET /burst")+"?precision=300", &fc)
	marked := 0
	for _, pt := range fc.History {
		if pt.Anomaly == nil {
			continue
		}
		marked++
		if pt.Time == ev.Peak && (pt.Anomaly.Score == nil || *pt.Anomaly.Score != *ev.Score) {
			t.Errorf("the peak scores %v in api/forecast, %v in api/anomalies", pt.Anomaly.Score, *ev.Score)
		}
	}
	if marked == 0 {
		t.Error("api/forecast marks none of the burst's buckets")
	}
	var inc apiIncidents
	getInto(t, f.Root+"api/incidents?precision=300&series="+url.QueryEscape("GET /burst"), &inc)
	if inc.Total != 1 || len(inc.Incidents) != 1 || *inc.Incidents[0].Score != *ev.Score || !inc.Incidents[0].InWindow {
		t.Fatalf("api/incidents: %+v, want the burst, in the window", inc)
	}
	getInto(t, f.Root+"api/incidents?kind=drop", &inc)
	if inc.Total != 0 {
		t.Errorf("kind=drop lists %+v", inc)
	}

	// Eleven hours on, the burst's buckets have left the window of 5 min.
	f.Clock.Advance(11 * time.Hour)
	getInto(t, f.Root+"api/incidents?precision=300&since=0", &inc)
	if inc.Total != 1 || inc.Incidents[0].InWindow || inc.Incidents[0].Series != "GET /burst" {
		t.Errorf("once out of the window: %+v, want the burst, out of it", inc)
	}
	// within counts back from the store's clock, eleven hours on.
	for within, want := range map[string]int{"3600": 0, "86400": 1} {
		getInto(t, f.Root+"api/incidents?precision=300&within="+within, &inc)
		if inc.Total != want {
			t.Errorf("within=%s: %d incidents, want %d", within, inc.Total, want)
		}
	}
}

// Hostile or malformed parameters are 400 with a JSON error; a series
// the store does not keep is 404, in api/incidents and api/anomalies.
func TestIncidentsBadInput(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, Start: time.Now()})
	writeCounts(t, f, "GET /steady", 300, 121, steady(1))
	for q, want := range map[string]int{
		"api/incidents?since=abc":                             http.StatusBadRequest,
		"api/incidents?since=100&until=50":                    http.StatusBadRequest,
		"api/incidents?since=-5":                              http.StatusBadRequest,
		"api/incidents?until=99999999999999999999":            http.StatusBadRequest,
		"api/incidents?limit=0":                               http.StatusBadRequest,
		"api/incidents?limit=5000":                            http.StatusBadRequest,
		"api/incidents?offset=-1":                             http.StatusBadRequest,
		"api/incidents?kind=%3Cscript%3E":                     http.StatusBadRequest,
		"api/incidents?precision=7":                           http.StatusBadRequest,
		"api/incidents?series=" + strings.Repeat("x", 5000):   http.StatusBadRequest,
		"api/incidents?series=%00":                            http.StatusBadRequest,
		"api/incidents?series=GET%20%2Fnowhere":               http.StatusNotFound,
		"api/anomalies?precision=300&series=GET%20%2Fnowhere": http.StatusNotFound,
		"api/incidents?series=GET%20%2Fsteady&limit=1000":     http.StatusOK,
	} {
		r := dashtest.Get(t, f.Root+q)
		if r.Status != want {
			t.Errorf("%s: status %d, want %d: %s", q, r.Status, want, r.Body)
			continue
		}
		if want != http.StatusOK && !json.Valid([]byte(r.Body)) {
			t.Errorf("%s: the error is not JSON: %s", q, r.Body)
		}
	}
}
