package pulseecho_test

import (
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/timeseries"
)

// One client behind the loopback forges 40 X-Forwarded-For addresses: one
// visitor, unless the app trusts its proxy through e.IPExtractor. The
// VisitorID hook replaces the address, and "" counts nobody.
func TestHitsVisitors(t *testing.T) {
	srv := redistest.Start(t)
	tests := []struct {
		name      string
		extractor echo.IPExtractor
		visitorID func(c echo.Context) string
		want      []timeseries.Visitor
	}{
		{"remote address only", nil, nil, tracktest.ForgedClient()},
		{"trusted proxy", echo.ExtractIPFromXFFHeader(), nil, tracktest.ForgedAddrs(40)},
		{"VisitorID", nil, func(c echo.Context) string { return c.QueryParam("user") }, tracktest.ForgedIDs(40)},
		{"VisitorID says none", nil, func(echo.Context) string { return "" }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			rec := recorder(t, srv, timeseries.Config{})
			tracktest.Flush(t, rec)
			e := forum(pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec, VisitorID: tt.visitorID}))
			e.IPExtractor = tt.extractor
			for _, req := range tracktest.ForgedRequests(40) {
				e.ServeHTTP(httptest.NewRecorder(), req)
			}
			tracktest.AssertDayVisitors(t, srv.Do, rec, "hits", tt.want)
		})
	}
}

// A Recorder with visitors off never has the middleware work out a
// visitor: the VisitorID hook is not called.
func TestHitsVisitorIDOnlyWithVisitors(t *testing.T) {
	srv := redistest.Start(t)
	tracktest.HooksOnlyWithVisitors(t, func(off bool, n int) []int {
		var calls int
		e := forum(pulseecho.HitsWithConfig(pulseecho.HitsConfig{
			Recorder:  recorder(t, srv, timeseries.Config{DisableVisitors: off}),
			VisitorID: func(echo.Context) string { calls++; return "reader" },
		}))
		for range n {
			e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/posts/1", nil))
		}
		return []int{calls}
	})
}
