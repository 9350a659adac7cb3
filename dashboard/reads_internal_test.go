package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestReadsBounded: while every turn among ConcurrentReads is taken, a
// series read waits for one within Timeout, then answers 503 saying the
// dashboard is busy; once a turn is free, reads are served again. The
// turns are taken by hand: a read of the store gives its turn back by its
// own deadline, before any later read's, so real reads rarely show it.
func TestReadsBounded(t *testing.T) {
	srv := redistest.Start(t)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, timeseries.NewManualClock(time.Unix(1700000002, 0)))
	if err != nil {
		t.Fatal(err)
	}
	srv.Do("HSET", store.Schema().CountKey(5, "hits"), 1700000000, 3)
	srv.Do("ZADD", store.Schema().KnownKey(), 0, timeseries.KnownMember(5, "hits"))
	s, err := newServer(Config{Store: store, ConcurrentReads: 2, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	get := func(target string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
		return w
	}
	for _, target := range []string{"/api/counters/hits?precision=5", "/api/overview?precision=5"} {
		s.reads.slots <- struct{}{}
		s.reads.slots <- struct{}{}
		start := time.Now()
		w := get(target)
		if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "too many reads") {
			t.Errorf("%s, no turn free: %d %s", target, w.Code, w.Body)
		}
		if waited := time.Since(start); waited < 150*time.Millisecond {
			t.Errorf("%s answered after %v: it did not wait for a turn", target, waited)
		}
		<-s.reads.slots
		if w := get(target); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"count":3`) {
			t.Errorf("%s, a turn free: %d %s", target, w.Code, w.Body)
		}
		<-s.reads.slots
	}
}
