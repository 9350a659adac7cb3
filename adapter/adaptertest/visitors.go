package adaptertest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/timeseries"
)

// A visit is a request from a loopback address, forging an
// X-Forwarded-For when forged is set, and the visitor it must count as.
type visit struct {
	addr, forged, agent string
	want                timeseries.Visitor
}

// visits are the visitor table's requests, each on a connection of its
// own: ten clients of distinct addresses, one client on ten connections
// (ports), one client forging ten addresses, and two agents behind one
// address.
func visits() []visit {
	var out []visit
	add := func(addr, forged, agent string) {
		out = append(out, visit{addr, forged, agent, timeseries.Visitor{Addr: addr, UserAgent: agent}})
	}
	for i := range 10 {
		add(fmt.Sprintf("127.0.0.%d", 11+i), "", "kit/1")
	}
	for range 10 {
		add("127.0.0.21", "", "kit/1")
	}
	for i := range 10 {
		add("127.0.0.22", fmt.Sprintf("203.0.113.%d", i+1), "kit/1")
	}
	add("127.0.0.23", "", "kit/1")
	add("127.0.0.23", "", "kit/2")
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
// day's salt, so the same sketch. The clients are loopback addresses
// other than 127.0.0.1: on a host without them, the row is skipped.
func testVisitors(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	s := k.serveRoutes(t, []*timeseries.Recorder{rec}, basicRoutes())
	ref, err := adapter.HitsConfig[timeseries.Visitor]{Recorder: rec, HitsName: expectedSeries}.Meter(adapter.Glue[timeseries.Visitor]{
		ClientIP:  func(v timeseries.Visitor) string { return v.Addr },
		UserAgent: func(v timeseries.Visitor) string { return v.UserAgent },
	})
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[timeseries.Visitor]bool{}
	for _, v := range visits() {
		from(t, s, v)
		ref.Count(v.want, http.MethodGet, "", http.StatusOK, 0)
		distinct[v.want] = true
	}
	s.wait()
	flush(t, rec)
	got, want := dayVisitors(t, rec, "hits"), dayVisitors(t, rec, expectedSeries)
	if got != want {
		t.Errorf("hits: %d visitors today, want %d: a sketch's count of the %d clients", got, want, len(distinct))
	}
	if want < int64(len(distinct))-1 || want > int64(len(distinct))+1 {
		t.Errorf("the sketch of %d clients counts %d", len(distinct), want)
	}
}

// from sends v's request to s on a new connection from v's address.
func from(t testing.TB, s *served, v visit) {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(v.addr)}, Timeout: 5 * time.Second}
	if c, err := d.DialContext(t.Context(), "tcp", strings.TrimPrefix(s.URL(), "http://")); err != nil {
		t.Skipf("no connection from %s on this host: %v", v.addr, err)
	} else {
		c.Close()
	}
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL()+"/status/200", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", v.agent)
	if v.forged != "" {
		req.Header.Set("X-Forwarded-For", v.forged)
		req.Header.Set("X-Real-Ip", v.forged)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("from %s: %v", v.addr, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("from %s: %d", v.addr, resp.StatusCode)
	}
}

// dayVisitors is name's visitors in the 1-day bucket of rec's clock.
func dayVisitors(t testing.TB, rec *timeseries.Recorder, name string) int64 {
	t.Helper()
	day := timeseries.BucketStart(rec.Store().Clock().Now().Unix(), 86400)
	v, err := rec.Store().Visitors(context.Background(), name, 86400, day, day)
	if err != nil {
		t.Fatal(err)
	}
	return v.Window
}
