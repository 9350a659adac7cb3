package timeseries

import "net/http"

// Skip marks the request answered through w as not to be counted, for
// the adapter that wraps w: it calls SkipRequest on the first writer of
// the chain that has that method, following Unwrap methods (as
// http.ResponseController does), and reports whether it found one.
// Every Pulse middleware puts a writer with SkipRequest in the chain
// (pulsehttp's wraps the writer; the Echo adapters' sits under
// c.Response(), so Echo handlers pass c.Response()) and does not record
// a request so marked; each passes the mark on to the writers below it,
// so nested middlewares all leave the request out. The dashboard calls
// Skip for each of its requests, so watching it is not traffic.
func Skip(w http.ResponseWriter) bool {
	for w != nil {
		switch t := w.(type) {
		case interface{ SkipRequest() }:
			t.SkipRequest()
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
	return false
}
