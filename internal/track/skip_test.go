package track

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// pushing is a server's writer that can push, as HTTP/2's can.
type pushing struct {
	http.ResponseWriter
	pushed []string
}

func (w *pushing) Push(target string, _ *http.PushOptions) error {
	w.pushed = append(w.pushed, target)
	return nil
}

// A push goes to the writer below when it can push, and is refused with
// http.ErrNotSupported when it cannot.
func TestSkipWriterPush(t *testing.T) {
	below := &pushing{ResponseWriter: httptest.NewRecorder()}
	sw := GetSkipWriter(below)
	defer PutSkipWriter(sw)
	if err := sw.Push("/app.js", nil); err != nil || len(below.pushed) != 1 || below.pushed[0] != "/app.js" {
		t.Errorf("push through: %v, pushed %v", err, below.pushed)
	}
	plain := GetSkipWriter(httptest.NewRecorder())
	defer PutSkipWriter(plain)
	if err := plain.Push("/app.js", nil); !errors.Is(err, http.ErrNotSupported) {
		t.Errorf("push to a writer that cannot: %v, want http.ErrNotSupported", err)
	}
}
