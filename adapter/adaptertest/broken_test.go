package adaptertest

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulsehttp/mount"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// A bug is one an adapter of a framework might have.
type bug int

const (
	noBug      bug = iota
	panicAs200     // counts a panic as the 200 nothing written defaults to
	rawPath        // names the route by the request's path, not its template
	ignoreSkip     // counts requests marked with the skip mark
)

// counting is a net/http adapter of its own on package adapter, with
// the hooks h (if not nil) and b.
func counting(rec *timeseries.Recorder, h *Hooks, b bug) (func(http.Handler) http.Handler, error) {
	cfg := adapter.HitsConfig[*http.Request]{Recorder: rec, Routes: true, StatusClasses: true}
	if h != nil {
		cfg.SeriesName, cfg.VisitorID, cfg.Skipper = h.Request()
	}
	m, err := cfg.Meter(adapter.HTTP(func(r *http.Request) *http.Request { return r }, nil))
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if m.Skip(r) {
				next.ServeHTTP(w, r)
				return
			}
			rw, start, finished := adapter.NewWriter(w), m.Begin(), false
			defer func() {
				if !rw.Skipped() || b == ignoreSkip {
					_, route, _ := strings.Cut(r.Pattern, " ")
					if b == rawPath {
						route = r.URL.Path
					}
					m.Count(r, r.Method, route, rw.Status(finished || b == panicAs200), m.Elapsed(start))
				}
				rw.Release()
			}()
			next.ServeHTTP(rw, r)
			finished = true
		})
	}, err
}

// brokenAdapter serves the table's apps on a ServeMux counted by
// counting with b, the dashboard mounted by pulsehttp/mount.
func brokenAdapter(b bug) Adapter {
	return Adapter{Name: "broken", Start: HTTP(func(app App) (http.Handler, error) {
		mux := http.NewServeMux()
		for _, r := range app.Routes {
			mux.Handle(r.Method+" "+r.Path, r.HTTP())
		}
		var h http.Handler = mux
		if d := app.Dashboard; d != nil {
			var err error
			if h, err = mount.Dashboard(mux, d.Prefix, dashboard.Config{Store: d.Recorder.Store(), Health: d.Recorder}, loginOf(d)...); err != nil {
				return nil, err
			}
		}
		for i := len(app.Recorders) - 1; i >= 0; i-- {
			mw, err := counting(app.Recorders[i], app.Hooks, b)
			if err != nil {
				return nil, err
			}
			h = mw(h)
		}
		return h, nil
	})}
}

func loginOf(d *Dashboard) []func(http.Handler) http.Handler {
	if d.Login == nil {
		return nil
	}
	return []func(http.Handler) http.Handler{d.Login}
}

// The table fails an adapter with any of these bugs, in the rows named,
// and passes it without: the rows that find them run on every framework.
func TestBrokenAdaptersFail(t *testing.T) {
	pool := redistest.Start(t).Pool()
	for _, tc := range []struct {
		name string
		bug  bug
		rows []string // the rows that must fail
	}{
		{"no bug", noBug, nil},
		{"a panic counted as 200", panicAs200, []string{"panic"}},
		{"the raw path for the route", rawPath, []string{"counts", "unmatched", "refused methods", "durations"}},
		{"the skip mark ignored", ignoreSkip, []string{"skip", "nested skip", "dashboard", "dashboard login"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var failed []string
			for _, r := range rows {
				if r.applies(brokenAdapter(tc.bug).withDefaults()) != "" {
					continue
				}
				fails, skipped := record(t, pool, brokenAdapter(tc.bug), r)
				if len(fails) > 0 {
					failed = append(failed, r.name)
					t.Logf("%s fails: %s", r.name, fails[0])
				}
				if skipped && r.name != "visitors" {
					t.Errorf("%s skipped", r.name)
				}
			}
			for _, name := range tc.rows {
				if !slices.Contains(failed, name) {
					t.Errorf("row %q passed an adapter with the bug", name)
				}
			}
			if tc.bug == noBug && len(failed) > 0 {
				t.Errorf("rows %v failed the adapter without a bug", failed)
			}
		})
	}
}
