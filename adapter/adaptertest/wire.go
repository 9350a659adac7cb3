package adaptertest

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// testServer is an app served on a loopback port.
type testServer struct {
	*httptest.Server
	served sync.WaitGroup
}

// server serves h on a loopback port until the test ends; a panic that
// reaches it is not logged.
func server(t *testing.T, h http.Handler) *testServer {
	t.Helper()
	ts := &testServer{}
	ts.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.served.Add(1)
		defer ts.served.Done()
		h.ServeHTTP(w, r)
	}))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

// wait waits for every request sent to have left the app, and so the
// adapter, which records after the client may have its answer: after a
// hijack, a panic, a streamed body.
func (ts *testServer) wait() { ts.served.Wait() }

// A handler that panics is counted once, as the 500 the server turns it
// into when it wrote nothing, as what it wrote otherwise; the panic goes
// on up to the server, which closes the connection.
func testPanic(t *testing.T, k *kit) {
	rec := k.recorder(t, k.prefix)
	routes := []Route{
		{http.MethodGet, "/panic", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("handler bug") })},
		{http.MethodGet, "/late", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusAccepted)
			w.(http.Flusher).Flush()
			panic("late bug")
		})},
	}
	ts := server(t, k.serve(t, []*timeseries.Recorder{rec}, routes, nil))
	for _, p := range []string{"/panic", "/late"} {
		if resp, err := http.Get(ts.URL + p); err == nil {
			resp.Body.Close()
		}
	}
	ts.wait()
	p, l := k.name(http.MethodGet, "/panic"), k.name(http.MethodGet, "/late")
	k.exact(t, rec, map[string]int64{"hits": 2, p: 1, l: 1, "status:5xx": 1, "status:2xx": 1,
		p + " status:5xx": 1, l + " status:2xx": 1})
}

// A handler that takes the connection over and answers an upgrade on it
// is counted as the 101 it sends, once.
func testHijack(t *testing.T, k *kit) {
	rec := k.recorder(t, k.prefix)
	upgrade := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		line, _ := brw.ReadString('\n')
		brw.WriteString(line)
		brw.Flush()
	})
	ts := server(t, k.serve(t, []*timeseries.Recorder{rec}, []Route{{http.MethodGet, "/upgrade", upgrade}}, nil))
	conn, err := net.DialTimeout("tcp", ts.Listener.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, "GET /upgrade HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	io.WriteString(conn, "ping\n")
	if line, err := br.ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("echo over the hijacked connection: %q %v", line, err)
	}
	conn.Close()
	ts.wait()
	u := k.name(http.MethodGet, "/upgrade")
	k.exact(t, rec, map[string]int64{"hits": 1, u: 1, "status:1xx": 1, u + " status:1xx": 1})
}

// A streamed answer reaches the client as it is flushed, through the
// adapter's writer, and counts once as its 200.
func testStreaming(t *testing.T, k *kit) {
	rec := k.recorder(t, k.prefix)
	read := make(chan struct{})
	stream := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "first\n")
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush: %v", err)
			return
		}
		select { // the client has the first line before the second is written
		case <-read:
		case <-time.After(10 * time.Second):
			t.Error("the client never had the first line: the flush did not reach it")
		}
		io.WriteString(w, "second\n")
	})
	ts := server(t, k.serve(t, []*timeseries.Recorder{rec}, []Route{{http.MethodGet, "/stream", stream}}, nil))
	resp, err := http.Get(ts.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	first, _ := br.ReadString('\n')
	close(read)
	rest, _ := io.ReadAll(br)
	resp.Body.Close()
	if first != "first\n" || !strings.HasPrefix(string(rest), "second\n") {
		t.Errorf("streamed %q then %q", first, rest)
	}
	ts.wait()
	s := k.name(http.MethodGet, "/stream")
	k.exact(t, rec, map[string]int64{"hits": 1, s: 1, "status:2xx": 1, s + " status:2xx": 1})
}
