package pulsehttp_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/pulsehttp"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestStatusCapture(t *testing.T) {
	srv := redistest.Start(t)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		panics  any // the value that must come out of the middleware
		want    string
	}{
		{"WriteHeader", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }, nil, "status:2xx"},
		{"first WriteHeader wins", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTeapot)
			w.WriteHeader(http.StatusOK)
		}, nil, "status:4xx"},
		{"redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/x", http.StatusFound) }, nil, "status:3xx"},
		{"implicit 200 on Write", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hi") }, nil, "status:2xx"},
		{"nothing written", func(w http.ResponseWriter, r *http.Request) {}, nil, "status:2xx"},
		{"1xx then final", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusServiceUnavailable)
		}, nil, "status:5xx"},
		{"1xx then Write", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusEarlyHints)
			io.WriteString(w, "hi")
		}, nil, "status:2xx"},
		{"Flush", func(w http.ResponseWriter, r *http.Request) { w.(http.Flusher).Flush() }, nil, "status:2xx"},
		{"panic", func(w http.ResponseWriter, r *http.Request) { panic("handler bug") }, "handler bug", "status:5xx"},
		{"ErrAbortHandler", func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) }, http.ErrAbortHandler, "status:5xx"},
		{"panic after WriteHeader", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusAccepted)
			panic("late bug")
		}, "late bug", "status:2xx"},
		// net/http panics on a code outside 100 to 999: the 500 that
		// becomes is counted, not the code.
		{"invalid code", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(1000) }, "invalid WriteHeader code 1000", "status:5xx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			rec := recorder(t, srv, timeseries.Config{})
			h := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: rec, StatusClasses: true})(tt.handler)
			func() {
				defer func() {
					if p := recover(); p != tt.panics {
						t.Errorf("panic %v, want %v", p, tt.panics)
					}
				}()
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
			}()
			checkSeries(t, seriesCounts(t, srv, rec), expect(tt.want))
		})
	}
}

// served runs h behind the middleware on a real server, and calls
// finished each time the middleware has returned for a request, so the
// test reads the counts only once they are recorded.
func served(t *testing.T, cfg pulsehttp.HitsConfig, h http.Handler) (ts *httptest.Server, finished <-chan struct{}) {
	t.Helper()
	done := make(chan struct{}, 16)
	mw := pulsehttp.HitsWithConfig(cfg)(h)
	ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { done <- struct{}{} }()
		mw.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, done
}

func wait(t *testing.T, finished <-chan struct{}) {
	t.Helper()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not return")
	}
}

// copySpy stands for a server writer: it notes whether io.Copy into the
// middleware's writer reached its ReadFrom (the sendfile path) or fell
// back to Write.
type copySpy struct {
	http.ResponseWriter
	readFroms, writes int
}

func (s *copySpy) Write(p []byte) (int, error) { s.writes++; return s.ResponseWriter.Write(p) }

func (s *copySpy) ReadFrom(r io.Reader) (int64, error) {
	s.readFroms++
	return s.ResponseWriter.(io.ReaderFrom).ReadFrom(r)
}

func TestReadFromServesFile(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{})
	body := make([]byte, 1<<20)
	rand.Read(body)
	file := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	spies := make(chan *copySpy, 1)
	mw := pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{Recorder: rec, StatusClasses: true})(http.HandlerFunc(
		func(w http.ResponseWriter, r *http.Request) {
			f, err := os.Open(file)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			if _, err := io.Copy(w, f); err != nil {
				t.Error(err)
			}
		}))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		spy := &copySpy{ResponseWriter: w}
		mw.ServeHTTP(spy, r)
		spies <- spy
	}))
	defer ts.Close()
	resp, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes (%v), want the %d of the file", len(got), err, len(body))
	}
	spy := <-spies
	if spy.readFroms != 1 || spy.writes != 0 {
		t.Errorf("server writer: %d ReadFrom, %d Write calls; want the copy handed to ReadFrom", spy.readFroms, spy.writes)
	}
	checkSeries(t, seriesCounts(t, srv, rec), expect("status:2xx"))
}

// The handler takes the connection over and speaks an upgraded protocol
// on it, the way a websocket library does.
func TestHijackUpgrade(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /echo", func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		line, _ := brw.ReadString('\n')
		brw.WriteString(line)
		brw.Flush()
	})
	ts, finished := served(t, pulsehttp.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}, mux)

	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, "GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v, %v", resp, err)
	}
	io.WriteString(conn, "ping\n")
	if line, err := br.ReadString('\n'); line != "ping\n" {
		t.Fatalf("echo: %q, %v", line, err)
	}
	wait(t, finished)
	checkSeries(t, seriesCounts(t, srv, rec), expectRoute("GET /echo", "status:1xx"))
}

// Flush reaches the wire: the client has the headers while the handler
// still runs.
func TestFlushStreams(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{})
	release := make(chan struct{})
	ts, finished := served(t, pulsehttp.HitsConfig{Recorder: rec, StatusClasses: true}, http.HandlerFunc(
		func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "first\n")
			if err := http.NewResponseController(w).Flush(); err != nil {
				t.Errorf("Flush: %v", err)
			}
			<-release
			io.WriteString(w, "second\n")
		}))
	resp, err := http.Get(ts.URL)
	if err != nil {
		close(release)
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	close(release)
	if line != "first\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	wait(t, finished)
	checkSeries(t, seriesCounts(t, srv, rec), expect("status:2xx"))
}

// http.ResponseController reaches the server's writer through Unwrap for
// what the middleware's writer does not implement itself.
func TestResponseControllerUnwraps(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{})
	ts, finished := served(t, pulsehttp.HitsConfig{Recorder: rec}, http.HandlerFunc(
		func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			for name, err := range map[string]error{
				"SetWriteDeadline": rc.SetWriteDeadline(time.Now().Add(time.Minute)),
				"SetReadDeadline":  rc.SetReadDeadline(time.Now().Add(time.Minute)),
				"EnableFullDuplex": rc.EnableFullDuplex(),
			} {
				if err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
			// Full duplex: the body can still be read after writing.
			io.WriteString(w, "reading: ")
			rc.Flush()
			io.Copy(w, r.Body)
		}))
	resp, err := http.Post(ts.URL, "text/plain", bytes.NewReader([]byte("the body")))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "reading: the body" {
		t.Errorf("response %q", got)
	}
	wait(t, finished)
	checkSeries(t, seriesCounts(t, srv, rec), expect())
}

// Without a server writer that can, the controller's calls report
// http.ErrNotSupported rather than pretend.
func TestResponseControllerNotSupported(t *testing.T) {
	srv := redistest.Start(t)
	rec := recorder(t, srv, timeseries.Config{})
	h := pulsehttp.Hits(rec)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if _, _, err := rc.Hijack(); !errors.Is(err, http.ErrNotSupported) {
			t.Errorf("Hijack: %v", err)
		}
		if err := rc.SetWriteDeadline(time.Now()); !errors.Is(err, http.ErrNotSupported) {
			t.Errorf("SetWriteDeadline: %v", err)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(struct{ http.ResponseWriter }{w}, httptest.NewRequest("GET", "/", nil))
	if w.Code != http.StatusNoContent {
		t.Errorf("status %d", w.Code)
	}
}
