package adaptertest

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"path"
	"strconv"

	"github.com/pulse-dev/pulse/timeseries"
)

// A Kind is how a Route's handler behaves; the adapter's test builds it
// with its framework's handlers, calling the Route's methods for the
// parts the table measures.
type Kind int

const (
	// KindStatus answers Route.Status of the request's path, no body.
	KindStatus Kind = iota
	// KindSkip marks its request with the framework's skip mark
	// (timeseries.Skip on net/http, pulsefiber.Skip on Fiber) and
	// answers 204.
	KindSkip
	// KindPanic panics before anything is written.
	KindPanic
	// KindLatePanic sets 202, sends it to the client when the framework
	// can send a header before its handler returns (net/http's Flush),
	// then panics.
	KindLatePanic
	// KindHijack takes the connection over: it answers the upgrade with
	// "101 Switching Protocols", "Upgrade: echo", "Connection: Upgrade"
	// (net/http: written on the connection by Route.Upgrade; fasthttp:
	// set on the response, then the connection hijacked), then hands the
	// connection to Route.Echo.
	KindHijack
	// KindStream answers 200 with a body streamed by Route.Stream,
	// flushing as it is told.
	KindStream
	// KindSleep calls Route.Sleep with the request's path and answers 200.
	KindSleep
	// KindError returns an error (Adapter.ReturnsErrors): the
	// framework's error of status Code (echo.NewHTTPError,
	// fiber.NewError), or when Code is 0, Route.Err, a plain error.
	KindError
)

// A Route is a route of an App: Method ("GET", or one outside the
// standard set, "PROPFIND") and Path, a literal path whose "{name}"
// segments are parameters, served by a handler of Kind.
type Route struct {
	Method, Path string
	Kind         Kind
	// Code is KindStatus's fixed status (0: the path's last segment) and
	// KindError's (0: a plain error).
	Code int

	stream func(w io.Writer, flush func() error) // KindStream's body
	sleep  func(path string)                     // KindSleep's work
}

// Status is the status KindStatus answers a request of path with: Code,
// or the number path ends with ("/status/503"), 400 when it ends with
// none.
func (rt Route) Status(path string) int {
	if rt.Code != 0 {
		return rt.Code
	}
	code, err := strconv.Atoi(lastSegment(path))
	if err != nil {
		return http.StatusBadRequest
	}
	return code
}

func lastSegment(p string) string { return path.Base(p) }

// Stream writes KindStream's body to w, calling flush where the client
// must have what was written so far. It returns once the body is whole.
func (rt Route) Stream(w io.Writer, flush func() error) {
	if rt.stream != nil {
		rt.stream(w, flush)
	}
}

// Sleep is KindSleep's work for a request of path: it sleeps the
// milliseconds path ends with ("/sleep/12") and tells the table how long
// it took.
func (rt Route) Sleep(path string) {
	if rt.sleep != nil {
		rt.sleep(path)
	}
}

// Err is KindError's plain error.
func (rt Route) Err() error { return errKit }

var errKit = errors.New("adaptertest: the handler failed")

// upgradeResponse is KindHijack's answer, written on the connection.
const upgradeResponse = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n"

// Upgrade writes KindHijack's answer on a connection taken over from
// net/http, then serves it with Echo.
func (rt Route) Upgrade(rw *bufio.ReadWriter) {
	rw.WriteString(upgradeResponse)
	rw.Flush()
	rt.Echo(rw)
}

// Echo serves a connection after KindHijack's upgrade: it reads one line
// and writes it back.
func (Route) Echo(rw io.ReadWriter) {
	br := bufio.NewReader(rw)
	line, err := br.ReadString('\n')
	if err != nil {
		return
	}
	io.WriteString(rw, line)
	if f, ok := rw.(interface{ Flush() error }); ok {
		f.Flush()
	}
}

// HTTP is the route's handler on net/http, every Kind but KindError,
// which net/http has not: it answers 500.
func (rt Route) HTTP() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch rt.Kind {
		case KindStatus:
			w.WriteHeader(rt.Status(r.URL.Path))
		case KindSkip:
			if !timeseries.Skip(w) {
				http.Error(w, "no writer took the mark", http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		case KindPanic:
			panic("handler bug")
		case KindLatePanic:
			w.WriteHeader(http.StatusAccepted)
			_ = http.NewResponseController(w).Flush()
			panic("late bug")
		case KindHijack:
			hijack(w, rt)
		case KindStream:
			rt.Stream(w, http.NewResponseController(w).Flush)
		case KindSleep:
			rt.Sleep(r.URL.Path)
		default:
			http.Error(w, rt.Err().Error(), http.StatusInternalServerError)
		}
	})
}

// hijack takes w's connection and serves rt's upgrade on it.
func hijack(w http.ResponseWriter, rt Route) {
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer conn.Close()
	rt.Upgrade(brw)
}
