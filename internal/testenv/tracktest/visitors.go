package tracktest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/series"
)

// Flusher is the part of a *timeseries.Recorder the visitor checks use.
type Flusher interface {
	Flush(ctx context.Context) error
}

// Flush flushes rec (the first flush also loads the day's salt, so a
// test flushes once before its requests).
func Flush(t testing.TB, rec Flusher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// DayVisitors is PFCOUNT of name's visitors in today's 1-day bucket,
// after a flush of rec.
func DayVisitors(t testing.TB, do func(cmd string, args ...any) any, rec Flusher, name string) int64 {
	t.Helper()
	Flush(t, rec)
	key, _ := series.Keys{}.VisitorKey(86400, name, series.BucketStart(time.Now().Unix(), 86400))
	n, err := redis.Int64(do("PFCOUNT", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ForgedRequests are the requests of the visitor tests: one client (one
// connection address and User-Agent) forging a different public
// X-Forwarded-For address in each, and naming one of 7 app ids in
// ?user=.
func ForgedRequests(n int) []*http.Request {
	out := make([]*http.Request, n)
	for i := range out {
		req := httptest.NewRequest(http.MethodGet, "/?user="+strconv.Itoa(i%7), nil)
		req.RemoteAddr = "127.0.0.1:40000"
		req.Header.Set("X-Forwarded-For", "203.0.113."+strconv.Itoa(i+1))
		req.Header.Set("User-Agent", "same-browser/1.0")
		out[i] = req
	}
	return out
}

// Near reports whether an estimate of a small number of visitors is
// within HyperLogLog's error of want: exact for 0 and 1, one off for a
// few dozen.
func Near(got, want int64) bool {
	d := got - want
	if d < 0 {
		d = -d
	}
	return d <= (want+39)/40
}

// HooksOnlyWithVisitors checks that a middleware works out a request's
// visitor (calls the app's visitor hooks) once a request over a Recorder
// that counts visitors, and never over one with them off. serve serves
// n requests through the middleware over a Recorder with visitors off or
// on, and returns how many times each of its hooks ran.
func HooksOnlyWithVisitors(t *testing.T, serve func(visitorsOff bool, n int) []int) {
	t.Helper()
	const n = 5
	for _, off := range []bool{false, true} {
		want := n
		if off {
			want = 0
		}
		for i, calls := range serve(off, n) {
			if calls != want {
				t.Errorf("DisableVisitors %v: hook %d ran %d times for %d requests, want %d", off, i, calls, n, want)
			}
		}
	}
}
