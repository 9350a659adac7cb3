package pulsechi_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/pulse-dev/pulse/internal/testenv/hitbench"
	"github.com/pulse-dev/pulse/pulsechi"
	"github.com/pulse-dev/pulse/timeseries"
)

// postApp is the measured app: one route with a path parameter and a
// trivial handler, behind mw when it is not nil.
func postApp(mw func(http.Handler) http.Handler) http.Handler {
	r := chi.NewRouter()
	if mw != nil {
		r.Use(mw)
	}
	r.Get("/posts/{id}", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "post") })
	return r
}

func counted(rec *timeseries.Recorder) http.Handler {
	return postApp(pulsechi.HitsWithConfig(pulsechi.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
}

// Counting a request adds no allocation to chi's own, on a route or off.
func TestHitsAllocs(t *testing.T) {
	hitbench.Allocs(t, postApp(nil), counted, "GET /posts/{id}", "/posts/42", "/nowhere")
}

// BenchmarkHits serves one request per op, bare and counted.
func BenchmarkHits(b *testing.B) {
	hitbench.Bench(b, postApp(nil), counted, "GET /posts/{id}", "/posts/42")
}
