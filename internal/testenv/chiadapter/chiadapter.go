// Package chiadapter counts the requests of a chi router in a Pulse
// Recorder, through timeseries' exported API alone: what any adapter
// for a framework Pulse does not ship needs. It counts the series the
// shipped adapters count with Routes and StatusClasses on: hits (with
// its duration and visitor), "<METHOD> <route pattern>" (with its
// duration), "status:<class>" and "<METHOD> <route pattern> status:<class>",
// and leaves out requests marked with timeseries.Skip.
package chiadapter

import (
	"cmp"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/pulse-dev/pulse/timeseries"
)

// Hits returns chi middleware that records every request in rec.
func Hits(rec *timeseries.Recorder) func(http.Handler) http.Handler {
	hits, err := rec.Counter("hits")
	if err != nil {
		panic(fmt.Errorf("chiadapter: %w", err))
	}
	counter := func(name string) *timeseries.Counter {
		c, _ := rec.Counter(name) // nil for a name no series can hold
		return c
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var start time.Time
			if rec.KeepsDurations() {
				start = time.Now()
			}
			ww := &writer{WrapResponseWriter: middleware.NewWrapResponseWriter(w, r.ProtoMajor)}
			next.ServeHTTP(ww, r)
			if ww.skip {
				return
			}
			route := "unmatched"
			if p := chi.RouteContext(r.Context()).RoutePattern(); p != "" {
				route = methodName(r.Method) + " " + p
			}
			class := statusClass(cmp.Or(ww.Status(), http.StatusOK))
			q := timeseries.Request{Timed: [timeseries.MaxTimed]*timeseries.Counter{hits, counter(route)},
				Counted: [timeseries.MaxCounted]*timeseries.Counter{counter(class), counter(route + " " + class)}}
			if rec.KeepsDurations() {
				q.Duration = time.Since(start)
			}
			if rec.KeepsVisitors() {
				addr, _, _ := net.SplitHostPort(r.RemoteAddr)
				q.Visitor, q.Visited = timeseries.Visitor{Addr: addr, UserAgent: r.UserAgent()}, 1
			}
			rec.RecordRequest(q)
		})
	}
}

// writer notes the status, and the mark of timeseries.Skip (which the
// dashboard sets on its requests).
type writer struct {
	middleware.WrapResponseWriter
	skip bool
}

func (w *writer) SkipRequest() { w.skip = true }

// methodName is m, or "OTHER" for a method outside RFC 9110's: a client
// cannot make series by inventing methods.
func methodName(m string) string {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE":
		return m
	}
	return "OTHER"
}

// statusClass is the series of a status: "status:2xx" for 200 to 299.
func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "status:other"
	}
	return fmt.Sprintf("status:%dxx", status/100)
}
