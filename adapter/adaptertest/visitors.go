package adaptertest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/timeseries"
)

// A visit is a request from a connection's address, forging an
// X-Forwarded-For when forged is set, and the visitor it must count as.
type visit struct {
	remote, forged, agent string
	want                  timeseries.Visitor
}

// visits are the visitor table's requests: ten clients of distinct
// addresses, one client on ten connections (ports), one client forging
// ten addresses, and two agents behind one address.
func visits() []visit {
	var out []visit
	for i := range 10 {
		a := fmt.Sprintf("198.51.100.%d", i+1)
		out = append(out, visit{remote: a + ":40000", agent: "kit/1", want: timeseries.Visitor{Addr: a, UserAgent: "kit/1"}})
	}
	for i := range 10 {
		out = append(out, visit{remote: fmt.Sprintf("192.0.2.7:%d", 41000+i), agent: "kit/1",
			want: timeseries.Visitor{Addr: "192.0.2.7", UserAgent: "kit/1"}})
	}
	for i := range 10 {
		out = append(out, visit{remote: "[2001:db8::9]:42000", forged: fmt.Sprintf("203.0.113.%d", i+1), agent: "kit/1",
			want: timeseries.Visitor{Addr: "2001:db8::9", UserAgent: "kit/1"}})
	}
	for _, ua := range []string{"kit/1", "kit/2"} {
		out = append(out, visit{remote: "192.0.2.8:43000", agent: ua, want: timeseries.Visitor{Addr: "192.0.2.8", UserAgent: ua}})
	}
	return out
}

// expectedSeries is the series the table counts its expected visitors
// in, beside the adapter's.
const expectedSeries = "pulse-kit:expected"

// Each client counts once in the day's visitors of hits, whatever
// connection (port) it comes on and whatever X-Forwarded-For it forges:
// the adapter takes the connection's address, without its port, and the
// User-Agent. The count is compared, exactly, with the count of the same
// visitors recorded by the table itself in the same Recorder: the same
// day's salt, so the same sketch.
func testVisitors(t *testing.T, k *kit) {
	rec := k.recorder(t, k.prefix)
	h := k.serve(t, []*timeseries.Recorder{rec}, basicRoutes(), nil)
	ref, err := adapter.HitsConfig[timeseries.Visitor]{Recorder: rec, HitsName: expectedSeries}.Meter(adapter.Glue[timeseries.Visitor]{
		ClientIP:  func(v timeseries.Visitor) string { return v.Addr },
		UserAgent: func(v timeseries.Visitor) string { return v.UserAgent },
	})
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[timeseries.Visitor]bool{}
	for _, v := range visits() {
		req := httptest.NewRequest(http.MethodGet, "/status/200", nil)
		req.RemoteAddr = v.remote
		req.Header.Set("User-Agent", v.agent)
		if v.forged != "" {
			req.Header.Set("X-Forwarded-For", v.forged)
			req.Header.Set("X-Real-Ip", v.forged)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
		ref.Count(v.want, http.MethodGet, "", http.StatusOK, 0)
		distinct[v.want] = true
	}
	flush(t, rec)
	got, want := dayVisitors(t, rec, "hits"), dayVisitors(t, rec, expectedSeries)
	if got != want {
		t.Errorf("hits: %d visitors today, want %d: a sketch's count of the %d clients", got, want, len(distinct))
	}
	if want < int64(len(distinct))-1 || want > int64(len(distinct))+1 {
		t.Errorf("the sketch of %d clients counts %d", len(distinct), want)
	}
}

// dayVisitors is name's visitors in the 1-day bucket of rec's clock.
func dayVisitors(t *testing.T, rec *timeseries.Recorder, name string) int64 {
	t.Helper()
	day := timeseries.BucketStart(rec.Store().Clock().Now().Unix(), 86400)
	v, err := rec.Store().Visitors(context.Background(), name, 86400, day, day)
	if err != nil {
		t.Fatal(err)
	}
	return v.Window
}
