package adapter

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
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
	sw := NewWriter(below)
	defer sw.Release()
	if err := sw.Push("/app.js", nil); err != nil || len(below.pushed) != 1 || below.pushed[0] != "/app.js" {
		t.Errorf("push through: %v, pushed %v", err, below.pushed)
	}
	plain := NewWriter(httptest.NewRecorder())
	defer plain.Release()
	if err := plain.Push("/app.js", nil); !errors.Is(err, http.ErrNotSupported) {
		t.Errorf("push to a writer that cannot: %v, want http.ErrNotSupported", err)
	}
}

// hijackable is a server's writer whose connection can be taken over.
type hijackable struct{ http.ResponseWriter }

func (hijackable) Hijack() (net.Conn, *bufio.ReadWriter, error) { return nil, nil, nil }

// The status counted is the one the client is sent, whatever the
// handler did to send it.
func TestWriterStatus(t *testing.T) {
	tests := []struct {
		name     string
		handle   func(w *Writer)
		finished bool
		want     int
		hijacked bool
	}{
		{"nothing written", func(*Writer) {}, true, 200, false},
		{"status", func(w *Writer) { w.WriteHeader(404) }, true, 404, false},
		{"second status ignored", func(w *Writer) { w.WriteHeader(503); w.WriteHeader(200) }, true, 503, false},
		{"informational first", func(w *Writer) { w.WriteHeader(103); w.WriteHeader(204) }, true, 204, false},
		{"body", func(w *Writer) { _, _ = w.Write([]byte("x")); w.WriteHeader(500) }, true, 200, false},
		{"copied body", func(w *Writer) { _, _ = io.Copy(w, strings.NewReader("x")) }, true, 200, false},
		{"flushed", func(w *Writer) { w.Flush() }, true, 200, false},
		{"panicked", func(*Writer) {}, false, 500, false},
		{"panicked after a status", func(w *Writer) { w.WriteHeader(201) }, false, 201, false},
		{"hijacked", func(w *Writer) { _, _, _ = w.Hijack() }, true, 101, true},
		{"hijacked after a status", func(w *Writer) { w.WriteHeader(200); _, _, _ = w.Hijack() }, true, 200, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWriter(hijackable{httptest.NewRecorder()})
			defer w.Release()
			tt.handle(w)
			if got := w.Status(tt.finished); got != tt.want || w.Hijacked() != tt.hijacked {
				t.Errorf("Status = %d, Hijacked %v; want %d, %v", got, w.Hijacked(), tt.want, tt.hijacked)
			}
		})
	}
}
