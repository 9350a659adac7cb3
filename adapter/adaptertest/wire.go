package adaptertest

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/timeseries"
)

// A handler that panics before writing is counted once, as the 500 the
// framework turns it into; one that sent 202 first is counted as what
// the client was sent: the 202 where the framework could send it before
// the panic, else the 500 its recovery answered.
func testPanic(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	s := k.serveRoutes(t, []*timeseries.Recorder{rec}, []Route{
		{Method: http.MethodGet, Path: "/panic", Kind: KindPanic},
		{Method: http.MethodGet, Path: "/late", Kind: KindLatePanic},
	})
	if code := s.hit(t, http.MethodGet, "/panic"); code != 0 && code != http.StatusInternalServerError {
		t.Errorf("GET /panic answered %d, want 500 or a closed connection", code)
	}
	late := s.hit(t, http.MethodGet, "/late")
	if late != http.StatusAccepted && late != http.StatusInternalServerError {
		t.Fatalf("GET /late answered %d, want the 202 it sent or a recovery's 500", late)
	}
	s.wait()
	p, l := k.name(http.MethodGet, "/panic"), k.name(http.MethodGet, "/late")
	lateClass := adapter.StatusClassName(late)
	want := map[string]int64{"hits": 2, p: 1, l: 1, "status:5xx": 1, p + " status:5xx": 1, l + " " + lateClass: 1}
	want[lateClass]++
	k.exact(t, rec, want)
}

// A handler that takes the connection over and answers an upgrade on it
// is counted as the 101 it sends, once.
func testHijack(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	s := k.serveRoutes(t, []*timeseries.Recorder{rec}, []Route{{Method: http.MethodGet, Path: "/upgrade", Kind: KindHijack}})
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
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
	s.wait()
	up := k.name(http.MethodGet, "/upgrade")
	k.exact(t, rec, map[string]int64{"hits": 1, up: 1, "status:1xx": 1, up + " status:1xx": 1})
}

// A streamed answer reaches the client as it is flushed, through the
// adapter, and counts once as its 200.
func testStreaming(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	read := make(chan struct{})
	stream := Route{Method: http.MethodGet, Path: "/stream", Kind: KindStream, stream: func(w io.Writer, flush func() error) {
		io.WriteString(w, "first\n")
		if err := flush(); err != nil {
			t.Errorf("flush: %v", err)
			return
		}
		select { // the client has the first line before the second is written
		case <-read:
		case <-time.After(10 * time.Second):
			t.Error("the client never had the first line: the flush did not reach it")
		}
		io.WriteString(w, "second\n")
	}}
	s := k.serveRoutes(t, []*timeseries.Recorder{rec}, []Route{stream})
	resp, err := s.client.Get(s.URL() + "/stream")
	if err != nil {
		close(read)
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
	s.wait()
	st := k.name(http.MethodGet, "/stream")
	k.exact(t, rec, map[string]int64{"hits": 1, st: 1, "status:2xx": 1, st + " status:2xx": 1})
}
