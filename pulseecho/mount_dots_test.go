package pulseecho_test

import (
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulseecho/mount"
	"github.com/pulse-dev/pulse/timeseries"
)

// Dot segments and escapes under the mount: a redirect stays under the
// prefix, escaped once, and never names another host.
func TestMountDotSegments(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{})
	e := echo.New()
	if err := mount.Dashboard(e, "/dashboard", dashboard.Config{Store: rec.Store(), Health: rec}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(e)
	defer ts.Close()
	dashtest.CheckDotSegments(t, ts.Listener.Addr().String(), false)
}
