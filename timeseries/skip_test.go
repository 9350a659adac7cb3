package timeseries_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pulse-dev/pulse/timeseries"
)

// marked is an adapter's writer: it takes the skip mark.
type marked struct {
	http.ResponseWriter
	skip bool
}

func (w *marked) SkipRequest() { w.skip = true }

// wrapped is an app's writer around another, reachable by Unwrap.
type wrapped struct{ http.ResponseWriter }

func (w wrapped) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// opaque wraps a writer without Unwrap: the mark cannot get through.
type opaque struct{ http.ResponseWriter }

// Skip marks the first writer of the chain that takes the mark, through
// any wrappers with Unwrap, and nothing through one without.
func TestSkip(t *testing.T) {
	tests := []struct {
		name  string
		chain func(*marked) http.ResponseWriter
		want  bool
	}{
		{"the adapter's writer", func(m *marked) http.ResponseWriter { return m }, true},
		{"through two wrappers", func(m *marked) http.ResponseWriter { return wrapped{wrapped{m}} }, true},
		{"through a wrapper without Unwrap", func(m *marked) http.ResponseWriter { return wrapped{opaque{m}} }, false},
		{"no adapter", func(*marked) http.ResponseWriter { return wrapped{httptest.NewRecorder()} }, false},
		{"nil", func(*marked) http.ResponseWriter { return nil }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &marked{ResponseWriter: httptest.NewRecorder()}
			if got := timeseries.Skip(tt.chain(m)); got != tt.want || m.skip != tt.want {
				t.Errorf("Skip = %v, marked %v; want %v", got, m.skip, tt.want)
			}
		})
	}
}
