package pulseecho_test

import (
	"bufio"
	"errors"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/wiretest"
	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/timeseries"
)

// skipApp has a route counted, one its handler marks with
// timeseries.Skip(c.Response()), one a middleware marks before the
// handler, and one marked through Echo's Gzip, which puts a writer of
// its own over the chain.
func skipApp(hits ...echo.MiddlewareFunc) *echo.Echo {
	e := echo.New()
	e.Use(hits...)
	ok := func(c echo.Context) error { return c.String(http.StatusOK, "ok") }
	e.GET("/counted", ok)
	e.GET("/handler", func(c echo.Context) error {
		timeseries.Skip(c.Response())
		return c.String(http.StatusOK, "not counted")
	})
	e.GET("/middleware", ok, func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			timeseries.Skip(c.Response())
			return next(c)
		}
	})
	e.GET("/gzip", func(c echo.Context) error {
		timeseries.Skip(c.Response())
		return c.String(http.StatusOK, strings.Repeat("not counted ", 100))
	}, echomw.GzipWithConfig(echomw.GzipConfig{MinLength: 1}))
	e.GET("/fails", func(c echo.Context) error {
		timeseries.Skip(c.Response())
		return echo.NewHTTPError(http.StatusTeapot)
	})
	return e
}

// A request marked with timeseries.Skip is not counted, however it was
// marked; the requests around it are, each once, though the writers
// that take the mark are pooled; the response is Echo's own again after
// Hits.
func TestSkipMark(t *testing.T) {
	srv := redistest.Start(t)
	for _, handleError := range []bool{false, true} {
		srv.FlushAll()
		rec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
		hits := pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec, Routes: true, HandleError: handleError})
		var writers []http.ResponseWriter
		outer := func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				err := next(c)
				writers = append(writers, c.Response().Writer)
				return err
			}
		}
		e := skipApp(outer, hits)
		for range 5 {
			for _, p := range []string{"/counted", "/handler", "/middleware", "/gzip", "/fails"} {
				req := httptest.NewRequest(http.MethodGet, p, nil)
				req.Header.Set("Accept-Encoding", "gzip")
				rr := httptest.NewRecorder()
				e.ServeHTTP(rr, req)
				want := http.StatusOK
				if p == "/fails" {
					want = http.StatusTeapot
				}
				if rr.Code != want {
					t.Errorf("%s: status %d, want %d", p, rr.Code, want)
				}
				if w := writers[len(writers)-1]; w != http.ResponseWriter(rr) {
					t.Fatalf("%s: the response writes to %T after Hits, not to the server's writer", p, w)
				}
			}
		}
		want := map[string]int64{"hits": 5, "GET /counted": 5}
		if got := seriesCounts(t, srv, rec); !maps.Equal(got, want) {
			t.Errorf("handleError=%v: series = %v, want %v", handleError, got, want)
		}
	}
}

// An app that counts into two Recorders, with one Hits inside the other:
// a request marked once is left out by both.
func TestSkipNestedHits(t *testing.T) {
	srv := redistest.Start(t)
	outerRec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
	innerRec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
	e := skipApp(pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: outerRec, HitsName: "outer"}),
		pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: innerRec, HitsName: "inner"}))
	for _, p := range []string{"/counted", "/handler", "/middleware", "/counted"} {
		serve(e, http.MethodGet, p)
	}
	seriesCounts(t, srv, outerRec)
	want := map[string]int64{"outer": 2, "inner": 2}
	if got := seriesCounts(t, srv, innerRec); !maps.Equal(got, want) {
		t.Errorf("series = %v, want %v", got, want)
	}
}

// Streaming through the writer Hits puts under the Response: a write
// deadline reaches the server's writer, and each flush reaches the client
// before the handler writes on, whether the handler flushes through
// Echo's Response, http.ResponseController or the Flusher of the writer
// below; the request is counted, or not when marked.
func TestSkipStreaming(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
	e := echo.New()
	e.Use(pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec, Routes: true}))
	flushes := map[string]func(c echo.Context) error{
		"response":   func(c echo.Context) error { c.Response().Flush(); return nil },
		"controller": func(c echo.Context) error { return http.NewResponseController(c.Response()).Flush() },
		"writer": func(c echo.Context) error {
			f, ok := c.Response().Writer.(http.Flusher)
			if !ok {
				return errors.New("the writer below the Response is no Flusher")
			}
			f.Flush()
			return nil
		},
	}
	stream := wiretest.NewStream()
	e.GET("/stream/:how", func(c echo.Context) error {
		flush := flushes[c.Param("how")]
		return stream.Handle(c.Response(), c.Request(), func() error { return flush(c) })
	})
	ts := httptest.NewServer(e)
	defer ts.Close()
	stream.ReadEach(t, ts.URL+"/stream/", slices.Collect(maps.Keys(flushes)))
	want := map[string]int64{"hits": 3, "GET /stream/:how": 3}
	if got := seriesCounts(t, srv, rec); !maps.Equal(got, want) {
		t.Errorf("series = %v, want %v", got, want)
	}
}

// A handler that takes the connection over (a WebSocket upgrade, say)
// gets it through the writer Hits puts under the Response, by Echo's
// Response, by http.ResponseController, or by the Hijacker of the writer
// below, and is counted as 101.
func TestSkipHijack(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
	e := echo.New()
	// The hit is recorded after the handler returns, which is after the
	// client has its echo: wait for every request to leave Hits.
	var served sync.WaitGroup
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			defer served.Done()
			return next(c)
		}
	})
	e.Use(pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec, StatusClasses: true}))
	hijacks := map[string]func(c echo.Context) (net.Conn, *bufio.ReadWriter, error){
		"response": func(c echo.Context) (net.Conn, *bufio.ReadWriter, error) { return c.Response().Hijack() },
		"controller": func(c echo.Context) (net.Conn, *bufio.ReadWriter, error) {
			return http.NewResponseController(c.Response()).Hijack()
		},
		"writer": func(c echo.Context) (net.Conn, *bufio.ReadWriter, error) {
			return c.Response().Writer.(http.Hijacker).Hijack()
		},
	}
	e.GET("/upgrade/:how", func(c echo.Context) error {
		conn, brw, err := hijacks[c.Param("how")](c)
		if err != nil {
			return err
		}
		defer conn.Close()
		return wiretest.EchoLine(brw)
	})
	ts := httptest.NewServer(e)
	defer ts.Close()
	served.Add(len(hijacks))
	wiretest.UpgradeEach(t, ts.Listener.Addr().String(), "/upgrade/", slices.Collect(maps.Keys(hijacks)))
	served.Wait()
	// A connection taken over before any status was written counts as
	// the 101 an upgrade answers on it.
	n := int64(len(hijacks))
	if got, want := seriesCounts(t, srv, rec), map[string]int64{"hits": n, "status:1xx": n}; !maps.Equal(got, want) {
		t.Errorf("series = %v, want %v", got, want)
	}
}
