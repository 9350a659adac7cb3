package echov5_test

import (
	"crypto/subtle"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v5"
	echomw "github.com/labstack/echo/v5/middleware"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/echov5"
	"github.com/pulse-dev/pulse/echov5/mount"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// quiet keeps the dashboard's note on echarts out of the test output.
var quiet = slog.New(slog.DiscardHandler)

// login is the app's own middleware in front of the dashboard.
func login() echo.MiddlewareFunc {
	return echomw.BasicAuth(func(c *echo.Context, user, password string) (bool, error) {
		return subtle.ConstantTimeCompare([]byte(user+":"+password), []byte("ops:secret")) == 1, nil
	})
}

// The dashboard behind a login: it answers through the prefix, escaped
// names included; the login's 401 carries the dashboard's headers; and
// neither the dashboard's requests nor the refused ones are counted.
func TestMount(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
	e := echo.New()
	e.Use(echov5.HitsWithConfig(echov5.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
	e.GET("/", func(c *echo.Context) error { return c.String(http.StatusOK, "home") })
	if err := mount.Dashboard(e, "/dashboard/", dashboard.Config{Store: rec.Store(), Health: rec, Logger: quiet}, login()); err != nil {
		t.Fatal(err)
	}
	ab, err := rec.Counter("a/b") // a name only an escaped path can carry
	if err != nil {
		t.Fatal(err)
	}
	rec.Record(ab)
	rec.Record(ab)
	seriesCounts(t, srv, rec) // flushed: the dashboard reads Redis

	for _, tt := range mountCases() {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.target, nil)
			if tt.authed {
				req.SetBasicAuth("ops", "secret")
			}
			rr := httptest.NewRecorder()
			e.ServeHTTP(rr, req)
			if rr.Code != tt.code {
				t.Fatalf("status %d, want %d: %.200s", rr.Code, tt.code, rr.Body.String())
			}
			if strings.HasPrefix(tt.target, "/dashboard/") || tt.target == "/dashboard" {
				for _, h := range []string{"X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
					if rr.Header().Get(h) == "" {
						t.Errorf("no %s header", h)
					}
				}
			}
			if tt.check != nil {
				tt.check(t, rr)
			}
		})
	}
	// Only the app's two requests; a/b is the test's own.
	want := map[string]int64{"a/b": 2, "hits": 2, "GET /": 1, "unmatched": 1, "status:2xx": 1, "status:4xx": 1,
		"GET / status:2xx": 1, "unmatched status:4xx": 1}
	if got := seriesCounts(t, srv, rec); !maps.Equal(got, want) {
		t.Errorf("series = %v, want %v", got, want)
	}
}

// mountCase is a request to the app of TestMount and what it answers.
type mountCase struct {
	method, target string
	authed         bool
	code           int
	check          func(t *testing.T, rr *httptest.ResponseRecorder)
}

func mountCases() []mountCase {
	return []mountCase{
		{"GET", "/dashboard/", false, 401, func(t *testing.T, rr *httptest.ResponseRecorder) {
			if rr.Header().Get("WWW-Authenticate") == "" {
				t.Error("no WWW-Authenticate: the login did not answer")
			}
		}},
		{"GET", "/dashboard/api/counters", false, 401, nil},
		{"GET", "/dashboard/", true, 200, func(t *testing.T, rr *httptest.ResponseRecorder) {
			if !strings.Contains(rr.Body.String(), "<title>Pulse</title>") {
				t.Errorf("not the page: %.200s", rr.Body.String())
			}
		}},
		{"GET", "/dashboard", true, 302, func(t *testing.T, rr *httptest.ResponseRecorder) {
			if loc := rr.Header().Get("Location"); loc != "./dashboard/" {
				t.Errorf("Location %q, want ./dashboard/", loc)
			}
		}},
		{"GET", "/dashboard/api/counters/a%2Fb?precision=86400", true, 200, func(t *testing.T, rr *httptest.ResponseRecorder) {
			var body struct {
				Name    string
				Samples []timeseries.Sample
			}
			if err := json.Unmarshal(rr.Body.Bytes(), &body); err != nil || body.Name != "a/b" ||
				len(body.Samples) != 1 || body.Samples[0].Count != 2 {
				t.Errorf("samples of a/b: %v %s", err, rr.Body.String())
			}
		}},
		{"GET", "/dashboard/api/nope", true, 404, nil},         // the dashboard's own 404
		{"POST", "/dashboard/api/counters", true, 405, nil},    // read-only
		{"DELETE", "/dashboard/api/counters", false, 401, nil}, // the login first
		{"GET", "/dashboardish", true, 404, nil},               // not under the prefix: the app's miss
		{"GET", "/", false, 200, nil},                          // the app
	}
}

func TestMountErrors(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
	cfg := dashboard.Config{Store: rec.Store(), Logger: quiet}
	for _, prefix := range []string{"", "/", "//", "dashboard", "/d/:id", "/d/*"} {
		if err := mount.Dashboard(echo.New(), prefix, cfg); err == nil || !strings.HasPrefix(err.Error(), "mount: ") {
			t.Errorf("prefix %q: %v", prefix, err)
		}
	}
	if err := mount.Dashboard(echo.New(), "/dashboard", dashboard.Config{}); err == nil || !strings.HasPrefix(err.Error(), "mount: ") {
		t.Errorf("no Store: %v", err)
	}
	e := echo.New()
	e.OnAddRoute = func(r echo.Route) error { return echo.ErrForbidden } // the app refuses routes
	if err := mount.Dashboard(e, "/dashboard", cfg); err == nil || !strings.HasPrefix(err.Error(), "mount: ") {
		t.Errorf("a route refused: %v", err)
	}
}
