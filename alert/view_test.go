package alert

import (
	"context"
	"encoding/json"
	"math"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// steadyErrors is 100 requests a minute for four days before burnNow,
// perMille of every thousand of them 5xx: every window burns alike.
func steadyErrors(name string, perMille int64) traffic {
	tr := traffic{}
	for k := int64(1); k <= 4*24*60; k++ {
		tr.add(name, burnNow-60*k, 1000)
		tr.add(errorSeries(name), burnNow-60*k, perMille)
	}
	return tr
}

// TestAlertWindows: an SLO alert's value, threshold and windows are
// those of one window pair, the pair nearest to (or furthest past) its
// rate, whether the alert fires or not.
func TestAlertWindows(t *testing.T) {
	type want struct {
		state         State
		value, thresh float64
		long, short   time.Duration
	}
	cases := []struct {
		name         string
		tr           traffic
		page, ticket want
	}{
		{
			// 10 minutes of half errors: the 1 h/5 min pair burns
			// 83.3 against 14.4, the 6 h/30 min one 13.9 against 6.
			name:   "a burst",
			tr:     steadyTraffic(App, 10, 50),
			page:   want{Firing, 250.0 / 3, 14.4, time.Hour, 5 * time.Minute},
			ticket: want{Firing, 1000.0 / 864, 1, 72 * time.Hour, 6 * time.Hour},
		},
		{
			// 0.3 % errors for days: every window burns 3, nearest
			// to the 6 h/30 min pair's 6.
			name:   "a slow burn",
			tr:     steadyErrors(App, 3),
			page:   want{Inactive, 3, 6, 6 * time.Hour, 30 * time.Minute},
			ticket: want{Firing, 3, 1, 72 * time.Hour, 6 * time.Hour},
		},
		{
			// No errors: no pair burns; each severity shows its first.
			name:   "no errors",
			tr:     steadyErrors(App, 0),
			page:   want{Inactive, 0, 14.4, time.Hour, 5 * time.Minute},
			ticket: want{Inactive, 0, 1, 72 * time.Hour, 6 * time.Hour},
		},
	}
	srv := redistest.Start(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv.FlushAll()
			c.tr.write(t, srv.Pool())
			clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
			e, err := New(Config{Pool: srv.Pool(), Clock: clock, Instance: "a",
				Rules: []Rule{{Name: "SLO", Kind: Availability, Series: App}}})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close(context.Background())
			e.tick(context.Background())
			alerts := answer(t, e).Rules[0].Alerts
			if len(alerts) != 2 {
				t.Fatalf("%d alerts, want page and ticket: %+v", len(alerts), alerts)
			}
			for i, w := range []want{c.page, c.ticket} {
				a := alerts[i]
				if a.State != w.state || math.Abs(a.Value-w.value) > 1e-6*max(1, w.value) || a.Threshold != w.thresh ||
					a.Window.Std() != w.long || a.ShortWindow.Std() != w.short {
					t.Errorf("%s: %s %v against %v over %v/%v, want %s %v against %v over %v/%v", a.Labels["severity"],
						a.State, a.Value, a.Threshold, a.Window, a.ShortWindow, w.state, w.value, w.thresh, w.long, w.short)
				}
			}
		})
	}
}

// answer is the handler's answer to a plain GET.
func answer(t *testing.T, e *Evaluator) handlerBody {
	t.Helper()
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/?transitions=0", nil))
	var body handlerBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 200 {
		t.Fatalf("answer: %d %s", rec.Code, rec.Body)
	}
	return body
}
