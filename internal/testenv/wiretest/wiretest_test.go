package wiretest

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// Read returns only after the handler's middleware has returned: a
// middleware that counts a request after the handler (as Hits does), and
// late, has counted it by then.
func TestReadWaitsForTheMiddleware(t *testing.T) {
	s := NewStream()
	var counted atomic.Bool
	stream := func(w http.ResponseWriter, r *http.Request) {
		_ = s.Handle(w, r, http.NewResponseController(w).Flush)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stream(w, r)
		time.Sleep(200 * time.Millisecond)
		counted.Store(true)
	}))
	defer ts.Close()
	s.Read(t, ts.URL)
	if !counted.Load() {
		t.Error("Read returned before the middleware counted the request")
	}
}
