package timeseries

import "net/http"

// Skip marks the request answered through w as not to be counted, for
// the adapter that wraps w: it calls SkipRequest on the first writer of
// the chain that has that method, following Unwrap methods (as
// http.ResponseController does), and reports whether it found one.
// Adapters that wrap the response writer (pulsehttp does) implement
// SkipRequest and then do not record the request; the dashboard calls
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
