package track

import (
	"bufio"
	"net"
	"net/http"
	"sync"

	"github.com/pulse-dev/pulse/timeseries"
)

// SkipWriter is the writer an adapter whose framework has its own
// response type (Echo) puts in that response's chain for the time of a
// request, so that timeseries.Skip, which follows Unwrap, finds a writer
// to mark. It changes nothing of what is written: Flush, Hijack and Push
// go to the writer it wraps, and Unwrap lets http.ResponseController
// reach the server's own writer.
type SkipWriter struct {
	http.ResponseWriter
	skip bool
}

// SkipWriters are pooled, so that the mark costs a request no allocation.
var skipWriters = sync.Pool{New: func() any { return new(SkipWriter) }}

// GetSkipWriter returns an unmarked SkipWriter around w.
func GetSkipWriter(w http.ResponseWriter) *SkipWriter {
	sw := skipWriters.Get().(*SkipWriter)
	*sw = SkipWriter{ResponseWriter: w}
	return sw
}

// PutSkipWriter returns sw to the pool; the caller no longer uses it and
// has taken it out of the response's chain.
func PutSkipWriter(sw *SkipWriter) {
	*sw = SkipWriter{}
	skipWriters.Put(sw)
}

// Skipped reports whether the request was marked with timeseries.Skip.
func (w *SkipWriter) Skipped() bool { return w.skip }

// SkipRequest is the mark timeseries.Skip sets. It is passed on to the
// writers below, so that every Pulse middleware the request went through
// (an app may count into two Recorders) leaves it out, not just the
// innermost.
func (w *SkipWriter) SkipRequest() {
	w.skip = true
	timeseries.Skip(w.ResponseWriter)
}

// Unwrap returns the writer it wraps, for http.ResponseController and
// timeseries.Skip.
func (w *SkipWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush sends what is buffered, when the writer below can.
func (w *SkipWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush with the error of the writer below, so that a
// caller who asks (http.ResponseController, Echo's Response) still learns
// that flushing is not supported.
func (w *SkipWriter) FlushError() error {
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack hands the connection over, when the writer below allows it.
func (w *SkipWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Push starts an HTTP/2 server push, when the writer below supports it;
// http.ResponseController has no way to reach it through Unwrap.
func (w *SkipWriter) Push(target string, opts *http.PushOptions) error {
	if p, ok := w.ResponseWriter.(http.Pusher); ok {
		return p.Push(target, opts)
	}
	return http.ErrNotSupported
}
