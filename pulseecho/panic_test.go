package pulseecho_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/timeseries"
)

// A panicking handler is counted once, as the status the client gets:
// the 500 it becomes when nothing was written (with or without Recover
// inside Hits), what was written before it otherwise. The panic goes on
// up from Hits untouched.
func TestHitsPanic(t *testing.T) {
	srv := redistest.Start(t)
	tests := []struct {
		name    string
		recover bool // echomw.Recover inside Hits
		write   int  // the status written before the panic, 0 for none
		want    string
	}{
		{"nothing written", false, 0, "status:5xx"},
		{"Recover inside", true, 0, "status:5xx"},
		{"written before", false, http.StatusAccepted, "status:2xx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			rec := recorder(t, srv, timeseries.Config{})
			e := echo.New()
			e.Logger.SetOutput(io.Discard) // Recover logs the stack
			e.Use(pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
			if tt.recover {
				e.Use(echomw.Recover())
			}
			e.GET("/bug", func(c echo.Context) error {
				if tt.write != 0 {
					c.Response().WriteHeader(tt.write)
				}
				panic("handler bug")
			})
			func() {
				defer func() {
					if p := recover(); (p != nil) == tt.recover {
						t.Errorf("panic out of Hits: %v, want one: %v", p, !tt.recover)
					}
				}()
				e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/bug", nil))
			}()
			got := seriesCounts(t, srv, rec)
			if got["hits"] != 1 || got[tt.want] != 1 || got["GET /bug "+tt.want] != 1 {
				t.Errorf("series %v, want one request in %s", got, tt.want)
			}
		})
	}
}
