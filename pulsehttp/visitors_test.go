package pulsehttp_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/timeseries"
)

// trustLoopbackProxy is a ClientIP for an app behind a proxy on the
// loopback: the last X-Forwarded-For address when the connection comes
// from the proxy, the connection's address otherwise.
func trustLoopbackProxy(r *http.Request) string {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return host
	}
	xff := r.Header.Get("X-Forwarded-For")
	if xff == "" {
		return host
	}
	return strings.TrimSpace(xff[strings.LastIndexByte(xff, ',')+1:])
}

// One client forges 40 X-Forwarded-For addresses: one visitor, unless the
// app trusts its proxy through ClientIP. The VisitorID hook replaces the
// address, and "" counts nobody.
func TestVisitors(t *testing.T) {
	srv := redistest.Start(t)
	tests := []struct {
		name      string
		clientIP  func(*http.Request) string
		visitorID func(*http.Request) string
		want      []timeseries.Visitor
	}{
		{"remote address only", nil, nil, tracktest.ForgedClient()},
		{"trusted proxy", trustLoopbackProxy, nil, tracktest.ForgedAddrs(40)},
		{"VisitorID", nil, func(r *http.Request) string { return r.URL.Query().Get("user") }, tracktest.ForgedIDs(40)},
		{"VisitorID says none", nil, func(*http.Request) string { return "" }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			rec := recorder(t, srv, timeseries.Config{})
			tracktest.Flush(t, rec)
			h := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: rec, ClientIP: tt.clientIP, VisitorID: tt.visitorID})(blog())
			for _, req := range tracktest.ForgedRequests(40) {
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
			tracktest.AssertDayVisitors(t, srv.Do, rec, "hits", tt.want)
		})
	}
}

// Routes and app-named series count visitors only when they opt in; the
// hits series always does.
func TestVisitorsOptIn(t *testing.T) {
	srv := redistest.Start(t)
	var three []timeseries.Visitor
	for i := range 3 {
		three = append(three, timeseries.Visitor{Addr: "192.0.2." + strconv.Itoa(i+1)})
	}
	tests := []struct {
		name                  string
		routes, named         bool
		wantRoute, wantTenant []timeseries.Visitor
	}{
		{"hits only", false, false, nil, nil},
		{"routes", true, false, three, nil},
		{"app-named series", false, true, nil, three},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			rec := recorder(t, srv, timeseries.Config{})
			tracktest.Flush(t, rec)
			h := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{
				Recorder: rec, Routes: true, VisitorRoutes: tt.routes, VisitorSeries: tt.named,
				SeriesName: func(*http.Request) string { return "tenant:a" },
			})(blog())
			for _, v := range three {
				req := httptest.NewRequest(http.MethodGet, "/posts/1", nil)
				req.RemoteAddr = v.Addr + ":5000"
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
			want := map[string][]timeseries.Visitor{"hits": three, "GET /posts/{id}": tt.wantRoute, "tenant:a": tt.wantTenant}
			for name, vs := range want {
				tracktest.AssertDayVisitors(t, srv.Do, rec, name, vs)
			}
		})
	}
}

// A Recorder with visitors off never has the middleware work out a
// visitor: neither ClientIP nor VisitorID is called.
func TestVisitorHooksOnlyWithVisitors(t *testing.T) {
	srv := redistest.Start(t)
	tracktest.HooksOnlyWithVisitors(t, func(off bool, n int) []int {
		rec := recorder(t, srv, timeseries.Config{DisableVisitors: off})
		var ips, ids int
		for _, cfg := range []pulsehttp.HitsConfig{
			{Recorder: rec, ClientIP: func(*http.Request) string { ips++; return "192.0.2.1" }},
			{Recorder: rec, VisitorID: func(*http.Request) string { ids++; return "reader" }},
		} {
			h := pulsehttp.HitsWithConfig(cfg)(blog())
			for range n {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/posts/1", nil))
			}
		}
		return []int{ips, ids}
	})
}
