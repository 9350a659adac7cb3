package echov5_test

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

	"github.com/labstack/echo/v5"
	echomw "github.com/labstack/echo/v5/middleware"

	"github.com/pulse-dev/pulse/echov5"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/wiretest"
	"github.com/pulse-dev/pulse/timeseries"
)

// skipApp has a route counted, one its handler marks with
// timeseries.Skip(c.Response()), one a middleware marks before the
// handler, one marked through Echo's Gzip, which sets a response of its
// own over the chain, and one that fails after its mark.
func skipApp(mw ...echo.MiddlewareFunc) *echo.Echo {
	e := echo.New()
	e.Use(mw...)
	ok := func(c *echo.Context) error { return c.String(http.StatusOK, "ok") }
	e.GET("/counted", ok)
	e.GET("/handler", func(c *echo.Context) error {
		timeseries.Skip(c.Response())
		return c.String(http.StatusOK, "not counted")
	})
	e.GET("/middleware", ok, func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			timeseries.Skip(c.Response())
			return next(c)
		}
	})
	e.GET("/gzip", func(c *echo.Context) error {
		timeseries.Skip(c.Response())
		return c.String(http.StatusOK, strings.Repeat("not counted ", 100))
	}, echomw.GzipWithConfig(echomw.GzipConfig{MinLength: 1}))
	e.GET("/fails", func(c *echo.Context) error {
		timeseries.Skip(c.Response())
		return echo.NewHTTPError(http.StatusTeapot, "")
	})
	return e
}

// opaque is an app's writer set over the Response without Unwrap: Hits
// cannot reach the Response below it and marks on top instead.
type opaque struct{ http.ResponseWriter }

// A request marked with timeseries.Skip is not counted, however it was
// marked, and also when an app's writer without Unwrap hides Echo's
// Response; the requests around it are, each once, though the writers
// that take the mark are pooled; the response is what it was again after
// Hits.
func TestSkipMark(t *testing.T) {
	srv := redistest.Start(t)
	for _, hide := range []bool{false, true} {
		for _, handleError := range []bool{false, true} {
			srv.FlushAll()
			rec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
			hits := echov5.HitsWithConfig(echov5.HitsConfig{Recorder: rec, Routes: true, HandleError: handleError})
			var after []http.ResponseWriter
			outer := func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c *echo.Context) error {
					if hide {
						c.SetResponse(opaque{c.Response()})
					}
					err := next(c)
					after = append(after, c.Response())
					if resp, _ := echo.UnwrapResponse(c.Response()); resp != nil {
						after = append(after, resp.ResponseWriter)
					} else {
						after = append(after, c.Response().(opaque).ResponseWriter.(*echo.Response).ResponseWriter)
					}
					return err
				}
			}
			e := skipApp(outer, hits)
			for range 5 {
				for _, p := range []string{"/counted", "/handler", "/middleware", "/gzip", "/fails"} {
					checkSkipRequest(t, e, p, hide, &after)
					after = after[:0]
				}
			}
			want := map[string]int64{"hits": 5, "GET /counted": 5}
			if got := seriesCounts(t, srv, rec); !maps.Equal(got, want) {
				t.Errorf("hide=%v handleError=%v: series = %v, want %v", hide, handleError, got, want)
			}
		}
	}
}

// checkSkipRequest serves p and checks its status and, in seen, the
// response and the server's writer below it as they were after Hits.
func checkSkipRequest(t *testing.T, e *echo.Echo, p string, hide bool, seen *[]http.ResponseWriter) {
	t.Helper()
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
	after := *seen
	if len(after) != 2 {
		t.Fatalf("%s: the outer middleware saw %d writers", p, len(after))
	}
	if _, isOpaque := after[0].(opaque); isOpaque != hide {
		t.Errorf("%s: the response is %T after Hits", p, after[0])
	}
	if after[1] != http.ResponseWriter(rr) {
		t.Errorf("%s: the Response writes to %T after Hits, not to the server's writer", p, after[1])
	}
}

// An app that counts into two Recorders, with one Hits inside the other:
// a request marked once is left out by both.
func TestSkipNestedHits(t *testing.T) {
	srv := redistest.Start(t)
	outerRec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
	innerRec := recorder(t, srv, timeseries.Config{FlushInterval: time.Hour})
	e := skipApp(echov5.HitsWithConfig(echov5.HitsConfig{Recorder: outerRec, HitsName: "outer"}),
		echov5.HitsWithConfig(echov5.HitsConfig{Recorder: innerRec, HitsName: "inner"}))
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
	e.Use(echov5.HitsWithConfig(echov5.HitsConfig{Recorder: rec, Routes: true}))
	flushes := map[string]func(c *echo.Context) error{
		"response":   func(c *echo.Context) error { c.Response().(http.Flusher).Flush(); return nil },
		"controller": func(c *echo.Context) error { return http.NewResponseController(c.Response()).Flush() },
		"writer": func(c *echo.Context) error {
			resp, err := echo.UnwrapResponse(c.Response())
			if err != nil {
				return err
			}
			f, ok := resp.ResponseWriter.(http.Flusher)
			if !ok {
				return errors.New("the writer below the Response is no Flusher")
			}
			f.Flush()
			return nil
		},
	}
	stream := wiretest.NewStream()
	e.GET("/stream/:how", func(c *echo.Context) error {
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
		return func(c *echo.Context) error {
			defer served.Done()
			return next(c)
		}
	})
	e.Use(echov5.HitsWithConfig(echov5.HitsConfig{Recorder: rec, StatusClasses: true}))
	hijacks := map[string]func(c *echo.Context) (net.Conn, *bufio.ReadWriter, error){
		"response": func(c *echo.Context) (net.Conn, *bufio.ReadWriter, error) {
			return c.Response().(http.Hijacker).Hijack()
		},
		"controller": func(c *echo.Context) (net.Conn, *bufio.ReadWriter, error) {
			return http.NewResponseController(c.Response()).Hijack()
		},
		"writer": func(c *echo.Context) (net.Conn, *bufio.ReadWriter, error) {
			resp, err := echo.UnwrapResponse(c.Response())
			if err != nil {
				return nil, nil, err
			}
			return resp.ResponseWriter.(http.Hijacker).Hijack()
		},
	}
	e.GET("/upgrade/:how", func(c *echo.Context) error {
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
