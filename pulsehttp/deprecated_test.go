package pulsehttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/timeseries"
)

// The former names still build the same middleware: Middleware, Config
// and DefaultConfig count as HitsWithConfig, HitsConfig and
// DefaultHitsConfig do.
func TestDeprecatedNames(t *testing.T) {
	srv := redistest.Start(t)
	tests := []struct {
		name string
		mw   func(rec *timeseries.Recorder) func(http.Handler) http.Handler
	}{
		{"HitsWithConfig", func(rec *timeseries.Recorder) func(http.Handler) http.Handler {
			cfg := pulsehttp.DefaultHitsConfig
			cfg.Recorder, cfg.Routes = rec, true
			return pulsehttp.HitsWithConfig(cfg)
		}},
		{"Middleware", func(rec *timeseries.Recorder) func(http.Handler) http.Handler {
			cfg := pulsehttp.DefaultConfig
			cfg.Recorder, cfg.Routes = rec, true
			return pulsehttp.Middleware(pulsehttp.Config(cfg))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			rec := recorder(t, srv, timeseries.Config{})
			mux := http.NewServeMux()
			mux.HandleFunc("GET /posts/{id}", func(http.ResponseWriter, *http.Request) {})
			h := tt.mw(rec)(mux)
			for _, p := range []string{"/posts/1", "/posts/2", "/nowhere"} {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, p, nil))
			}
			if err := rec.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			for name, want := range map[string]int64{"hits": 3, "GET /posts/{id}": 2, "unmatched": 1} {
				if got := srv.HashSum("count:86400:" + name); got != want {
					t.Errorf("%s: %d, want %d", name, got, want)
				}
			}
		})
	}
}
