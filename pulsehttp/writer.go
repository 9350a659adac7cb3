package pulsehttp

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"

	"github.com/pulse-dev/pulse/timeseries"
)

// responseWriter notes the status a handler answers with, and whether the
// request was marked with timeseries.Skip. It keeps http.Flusher,
// http.Hijacker and io.ReaderFrom, and Unwrap lets
// http.ResponseController reach the server's own writer for deadlines and
// full duplex.
type responseWriter struct {
	http.ResponseWriter
	status int // the final status written, 101 once hijacked; 0 until then
	skip   bool
}

var writers = sync.Pool{New: func() any { return new(responseWriter) }}

func getWriter(w http.ResponseWriter) *responseWriter {
	rw := writers.Get().(*responseWriter)
	*rw = responseWriter{ResponseWriter: w}
	return rw
}

func putWriter(rw *responseWriter) {
	*rw = responseWriter{}
	writers.Put(rw)
}

// WriteHeader notes the first final status; informational ones (1xx but
// 101) may precede it. The code is noted after the server's writer took
// it, so a code it panics on (outside 100 to 999) counts as the 500 the
// panic becomes, not as itself.
func (w *responseWriter) WriteHeader(code int) {
	w.ResponseWriter.WriteHeader(code)
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
}

func (w *responseWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// ReadFrom keeps the server's sendfile path for io.Copy into the writer.
func (w *responseWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{w.ResponseWriter}, r)
}

// writerOnly hides every method but Write, so io.Copy does not call
// ReadFrom again.
type writerOnly struct{ io.Writer }

// Flush sends what is buffered; the status is 200 unless one was written.
func (w *responseWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush with the server's error, which
// http.ResponseController.Flush returns rather than drops.
func (w *responseWriter) FlushError() error {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack hands the connection to the handler, when the server's writer
// allows it; http.ErrNotSupported otherwise. A hijacked request counts as
// 101 unless a status was written before: what the handler then writes
// on the connection (an upgrade, usually) is out of the server's sight.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return conn, rw, err
}

// Unwrap returns the writer it wraps, for http.ResponseController.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finalStatus is the status counted for the request. finished is false
// when the handler panicked.
func (w *responseWriter) finalStatus(finished bool) int {
	switch {
	case w.status != 0:
		return w.status
	case !finished:
		return http.StatusInternalServerError
	}
	return http.StatusOK // net/http answers 200 for a handler that wrote nothing
}

// SkipRequest is the mark timeseries.Skip sets: the middleware does not
// count the request. The mark is passed on to the writers below, so that
// a Pulse middleware around this one leaves the request out too.
func (w *responseWriter) SkipRequest() {
	w.skip = true
	timeseries.Skip(w.ResponseWriter)
}
