package adapter

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"

	"github.com/pulse-dev/pulse/timeseries"
)

// Writer is the http.ResponseWriter an adapter puts in a request's
// writer chain for as long as the request runs. It takes the mark of
// timeseries.Skip and notes the status the client is sent, and changes
// nothing of what is written: Flush, Hijack, Push and ReadFrom (the
// server's sendfile path) reach the writer below, and Unwrap lets
// http.ResponseController reach the server's own writer for deadlines
// and full duplex.
//
// A net/http-shaped router (ServeMux, chi) hands the handler the Writer
// itself. A framework with a response type of its own puts it where
// timeseries.Skip finds it through that type's Unwrap: under Echo's
// Response, for instance, whose status the adapter reads instead.
type Writer struct {
	http.ResponseWriter
	status int // the final status written, 101 once hijacked; 0 until then
	skip   bool
}

// Writers are pooled, so that a request costs no allocation.
var writers = sync.Pool{New: func() any { return new(Writer) }}

// NewWriter returns an unmarked Writer around w, from a pool: the
// adapter calls Release once the request is recorded and the Writer out
// of the chain.
func NewWriter(w http.ResponseWriter) *Writer {
	rw := writers.Get().(*Writer)
	*rw = Writer{ResponseWriter: w}
	return rw
}

// Release returns w to the pool; its caller no longer uses it. A
// request that panics may leave its Writer unreleased: the pool then
// makes another.
func (w *Writer) Release() {
	*w = Writer{}
	writers.Put(w)
}

// Skipped reports whether the request was marked with timeseries.Skip:
// the adapter does not record it.
func (w *Writer) Skipped() bool { return w.skip }

// SkipRequest is the mark timeseries.Skip sets. It is passed on to the
// writers below, so that every Pulse middleware the request went
// through (an app may count into two Recorders) leaves it out, not just
// the innermost.
func (w *Writer) SkipRequest() {
	w.skip = true
	timeseries.Skip(w.ResponseWriter)
}

// Status is the status to count: the first final status written (1xx
// but 101 are informational and may precede it), 101 for a connection
// hijacked before one, 200 once a body was written, flushed or copied
// without one, and for a handler that wrote nothing, as net/http sends.
// finished is false when the handler panicked: with no status written,
// that is the 500 the server answers.
func (w *Writer) Status(finished bool) int {
	switch {
	case w.status != 0:
		return w.status
	case !finished:
		return http.StatusInternalServerError
	}
	return http.StatusOK
}

// Hijacked reports whether the connection was hijacked before any status
// was written: a framework that keeps the status itself still holds its
// default then, and the adapter counts 101.
func (w *Writer) Hijacked() bool { return w.status == http.StatusSwitchingProtocols }

// WriteHeader notes the first final status. The code is noted after the
// writer below took it, so a code it panics on (outside 100 to 999)
// counts as the 500 the panic becomes, not as itself.
func (w *Writer) WriteHeader(code int) {
	w.ResponseWriter.WriteHeader(code)
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
}

// Write writes body bytes; the status is 200 unless one was written.
func (w *Writer) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// ReadFrom keeps the server's sendfile path for io.Copy into the writer.
func (w *Writer) ReadFrom(r io.Reader) (int64, error) {
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

// Flush sends what is buffered, when the writer below can.
func (w *Writer) Flush() { _ = w.FlushError() }

// FlushError is Flush with the error of the writer below, so that a
// caller who asks (http.ResponseController, Echo's Response) still
// learns that flushing is not supported.
func (w *Writer) FlushError() error {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack hands the connection over, when the writer below allows it;
// http.ErrNotSupported otherwise. A connection hijacked before a status
// was written counts as 101 Switching Protocols: what the handler then
// writes on it (an upgrade, usually) is out of the server's sight.
func (w *Writer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return conn, rw, err
}

// Push starts an HTTP/2 server push, when the writer below supports it;
// http.ResponseController has no way to reach it through Unwrap.
func (w *Writer) Push(target string, opts *http.PushOptions) error {
	if p, ok := w.ResponseWriter.(http.Pusher); ok {
		return p.Push(target, opts)
	}
	return http.ErrNotSupported
}

// Unwrap returns the writer it wraps, for http.ResponseController and
// timeseries.Skip.
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }
