package pulsehttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/timeseries"
)

// BenchmarkMiddleware serves one request per op through a ServeMux with
// a wildcard route: alone (bare), then with Pulse counting hits, the
// route and the status class (pulse). pulse reports extra-ns/op, its
// ns/op less bare's from the same run, which is what the middleware
// costs a request.
//
// The recorder writes to a real redis-server, every hour: the timed loop
// measures the request path, which never talks to Redis; the check after
// it writes what was counted and reads it back.
func BenchmarkMiddleware(b *testing.B) {
	if !redistest.Installed() {
		b.Skip("redis-server not installed; `make bench` installs it")
	}
	srv := redistest.Start(b)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /posts/{id}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "post")
	})
	var bareNs float64
	b.Run("bare", func(b *testing.B) {
		bareNs = serveLoop(b, mux)
	})
	b.Run("pulse", func(b *testing.B) {
		srv.FlushAll()
		rec, err := timeseries.NewRecorder(timeseries.Config{
			Pool: srv.Pool(), FlushInterval: time.Hour, OnError: func(err error) { b.Error(err) },
		})
		if err != nil {
			b.Fatal(err)
		}
		h := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true})(mux)
		ns := serveLoop(b, h)
		if bareNs > 0 {
			b.ReportMetric(ns-bareNs, "extra-ns/op")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rec.Close(ctx); err != nil {
			b.Fatal(err)
		}
		// One more than the loop: the warm-up request.
		for _, name := range []string{"hits", "GET /posts/{id}", "status:2xx"} {
			if got, want := srv.HashSum("count:86400:"+name), int64(b.N)+1; got != want {
				b.Fatalf("Redis holds %d hits in %s, served %d requests", got, name, want)
			}
		}
	})
}

// serveLoop times h serving the same request and returns its ns/op.
func serveLoop(b *testing.B, h http.Handler) float64 {
	req := httptest.NewRequest(http.MethodGet, "/posts/42", nil)
	w := &discardWriter{header: http.Header{}}
	h.ServeHTTP(w, req) // warm-up: the route's series are made here
	if w.status != http.StatusOK || w.body != len("post") {
		b.Fatalf("warm-up request: %d, %d bytes", w.status, w.body)
	}
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, req)
	}
	return float64(b.Elapsed().Nanoseconds()) / float64(b.N)
}

// discardWriter keeps nothing of the response but its status and size,
// so the response itself costs both variants the same, little.
type discardWriter struct {
	header http.Header
	status int
	body   int
}

func (w *discardWriter) Header() http.Header { return w.header }

func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body = len(p)
	return len(p), nil
}

func (w *discardWriter) WriteHeader(code int) { w.status = code }
