package alert

import (
	"context"
	"encoding/json"
	"math"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/testnow"
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
	t.Parallel()
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

// TestEveryRuleListsItsAlerts: after one evaluation with nothing
// breached, api/alerts lists every rule with what its values measure
// and each of its alerts, inactive, with its value, threshold and
// window: an operator sees how near each is to firing.
func TestEveryRuleListsItsAlerts(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(testnow.Now())
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), Clock: clock, SlowThresholds: []time.Duration{500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer closeRecorder(rec)
	hits, _ := rec.Counter(App)
	for _, d := range []time.Duration{time.Millisecond, time.Second} {
		rec.RecordRequest(timeseries.Request{Duration: d, Timed: [4]*timeseries.Counter{hits}})
	}
	flushAgain(t, clock, rec)
	rules := append(DefaultRules(), Rule{Name: "AppLatency", Kind: Latency, Series: App, Target: 40, Threshold: Duration(500 * time.Millisecond)})
	e, err := New(Config{Pool: srv.Pool(), Clock: clock, Instance: "a", Recorder: rec, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	e.tick(context.Background())
	type want struct {
		alerts    int
		threshold float64       // of the first alert
		window    time.Duration // of the first alert
	}
	wants := map[string]want{
		"PulseAppAvailability": {2, 14.4, time.Hour}, // no errors: each severity's first pair
		"PulseAppAbsent":       {1, 10, 15 * time.Minute},
		"AppLatency":           {2, 6, 6 * time.Hour},    // half slow, against a 60 % budget: burn 0.83 all over, nearest 6 h/30 min's 6
		"PulseRedisDown":       {1, 0, time.Second},      // the latest flush's
		"PulseDropped":         {1, 0, 30 * time.Second}, // since the last evaluation: one Interval at the first
		"PulseFlushStalled":    {1, 30, 30 * time.Second},
	}
	body := answer(t, e)
	if len(body.Rules) != len(wants) {
		t.Fatalf("%d rules, want %d", len(body.Rules), len(wants))
	}
	for _, r := range body.Rules {
		w := wants[r.Name]
		if len(r.Alerts) != w.alerts {
			t.Errorf("%s: %d alerts, want %d: %+v", r.Name, len(r.Alerts), w.alerts, r.Alerts)
			continue
		}
		a := r.Alerts[0]
		if a.State != Inactive || a.Threshold != w.threshold || a.Window.Std() != w.window || a.Since.IsZero() {
			t.Errorf("%s: %+v, want inactive against %v over %v", r.Name, a, w.threshold, w.window)
		}
	}
	i := slices.IndexFunc(body.Rules, func(r ruleView) bool { return r.Name == "AppLatency" })
	if lat := body.Rules[i]; lat.Target != 40 || lat.Threshold.Std() != 500*time.Millisecond || math.Abs(lat.Alerts[0].Value-0.5/0.6) > 1e-9 {
		t.Errorf("latency rule %+v: want its target, threshold and a burn of 0.83", lat)
	}
}
