package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/alert"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
)

const failingRoute = "GET /checkout"

// alertFixture is a dashboard whose Config.Alerts is a real evaluator's
// Handler, on the fixture's Redis and clock, after one evaluation of a
// route failing a third of its requests: its SLO fires.
func alertFixture(t *testing.T) (*dashtest.Fixture, http.Handler) {
	t.Helper()
	var ev *alert.Evaluator
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, NoEntities: true, Alerts: func(f *dashtest.Fixture) http.Handler {
		var err error
		ev, err = alert.New(alert.Config{Pool: f.Srv.Pool(), Clock: f.Clock, Instance: "dash", Interval: time.Hour,
			Rules: []alert.Rule{{Name: "CheckoutSLO", Kind: alert.Availability, Series: failingRoute, Target: 99,
				Windows: []alert.Window{{Long: alert.Duration(5 * time.Minute), Short: alert.Duration(time.Minute), Burn: 10, Severity: "page"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return ev.Handler()
	}})
	f.RecordFailing(t, failingRoute, 15, 5)
	// Run evaluates at once, then not for an Interval; Close waits for it.
	ctx, cancel := context.WithCancel(context.Background())
	go ev.Run(ctx)
	waitFiring(t, ev.Handler())
	cancel()
	if err := ev.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f, ev.Handler()
}

func waitFiring(t *testing.T, h http.Handler) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/?state=firing", nil))
		if strings.Contains(rec.Body.String(), `"state":"firing"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the SLO never fired: %s", rec.Body)
		}
	}
}

// TestAlertsEndpoint: without Config.Alerts, api/alerts is a JSON 404 and
// the page has no banner; with it, the dashboard answers what the
// evaluator's Handler answers, query and errors included, marked as not
// counted like the rest of the API.
func TestAlertsEndpoint(t *testing.T) {
	t.Run("none", func(t *testing.T) {
		f := dashtest.New(t, dashtest.Options{NoTraffic: true, NoEntities: true})
		r := dashtest.Get(t, f.Root+"api/alerts")
		var e struct{ Error string }
		if r.Status != http.StatusNotFound || json.Unmarshal([]byte(r.Body), &e) != nil || e.Error == "" {
			t.Errorf("api/alerts without Config.Alerts: %d %s, want a JSON 404", r.Status, r.Body)
		}
		page := dashtest.Get(t, f.Root).Body
		if strings.Contains(page, `id="alert-list"`) || !strings.Contains(page, `"alerts":false`) {
			t.Error("the page has an alert banner without Config.Alerts")
		}
	})

	f, direct := alertFixture(t)
	page := dashtest.Get(t, f.Root).Body
	for _, want := range []string{`id="alert-list"`, `id="alert-count"`, `"alerts":true`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s with Config.Alerts", want)
		}
	}
	for _, target := range []string{"", "?transitions=0", "?state=pending", "?state=firing&transitions=5"} {
		r := dashtest.Get(t, f.Root+"api/alerts"+target)
		rec := httptest.NewRecorder()
		direct.ServeHTTP(rec, httptest.NewRequest("GET", "/"+target, nil))
		if r.Status != http.StatusOK || r.Body != rec.Body.String() {
			t.Errorf("api/alerts%s: %d %s\nthe evaluator answers %d %s", target, r.Status, r.Body, rec.Code, rec.Body)
		}
		if r.Header.Get("X-Frame-Options") != "DENY" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("api/alerts%s: headers %v", target, r.Header)
		}
	}
	if r := dashtest.Get(t, f.Root+"api/alerts?state=firing"); !strings.Contains(r.Body, `"rule":"CheckoutSLO"`) || !strings.Contains(r.Body, `"route":"GET /checkout"`) {
		t.Errorf("firing alerts: %s", r.Body)
	}
	if r := dashtest.Get(t, f.Root+"api/alerts?transitions=-1"); r.Status != http.StatusBadRequest || !strings.Contains(r.Body, `"error"`) {
		t.Errorf("a bad parameter: %d %s, want the evaluator's JSON 400", r.Status, r.Body)
	}
	if r := dashtest.Do(t, http.MethodPost, f.Root+"api/alerts", nil); r.Status != http.StatusMethodNotAllowed {
		t.Errorf("POST api/alerts: %d", r.Status)
	}
	if h := f.Rec.Health(); h.PendingHits != 0 {
		t.Errorf("%d hits pending after the dashboard's requests: api/alerts was counted", h.PendingHits)
	}
	f.Srv.Stop()
	if r := dashtest.Get(t, f.Root+"api/alerts"); r.Status != http.StatusOK || !strings.Contains(r.Body, `"unavailable"`) {
		t.Errorf("Redis down: %d %s, want a 200 saying the shared alerts are unavailable", r.Status, r.Body)
	}
}
