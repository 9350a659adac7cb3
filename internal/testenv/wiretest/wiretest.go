// Package wiretest is both ends of the checks the adapters' tests make on
// a real connection through the writers Pulse puts in a response's chain:
// a stream whose chunks must each be flushed to the client before the
// handler writes on, and a connection taken over by the handler, as a
// WebSocket upgrade does.
package wiretest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// Chunks is how many chunks a Stream sends.
const Chunks = 3

// wait bounds how long either end waits for the other: only a broken
// flush makes it wait at all.
const wait = 10 * time.Second

// Stream pairs a handler that sends chunks with the client that reads
// them; the handler writes a chunk only once the client has read the one
// before, so a flush that does not reach the client fails the read.
type Stream struct{ acks chan struct{} }

// NewStream returns a Stream.
func NewStream() *Stream { return &Stream{acks: make(chan struct{})} }

// Serve writes the chunks to w, calling flush after each, and waits for
// the client to read each but the last before it writes on.
func (s *Stream) Serve(w io.Writer, flush func() error) error {
	for i := range Chunks {
		if _, err := io.WriteString(w, "chunk\n"); err != nil {
			return err
		}
		if err := flush(); err != nil {
			return err
		}
		if i == Chunks-1 {
			break
		}
		select {
		case <-s.acks:
		case <-time.After(wait):
			return errors.New("wiretest: the client did not read the chunk")
		}
	}
	return nil
}

// Handle serves the stream to a request of ReadEach: marked with
// timeseries.Skip when it asks to be, with a write deadline set through
// http.ResponseController (so through every Unwrap down to the server's
// writer), and flushed by flush.
func (s *Stream) Handle(w http.ResponseWriter, r *http.Request, flush func() error) error {
	if r.URL.Query().Get("skip") != "" {
		timeseries.Skip(w)
	}
	if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait)); err != nil {
		return err
	}
	return s.Serve(w, flush)
}

// ReadEach reads the stream of base+how for each of hows twice: once
// counted, once asking Handle to mark the request.
func (s *Stream) ReadEach(t testing.TB, base string, hows []string) {
	t.Helper()
	for _, how := range hows {
		s.Read(t, base+how)
		s.Read(t, base+how+"?skip=1")
	}
}

// Read gets url and reads its chunks one by one, telling the handler of
// each but the last, then the response to its end.
func (s *Stream) Read(t testing.TB, url string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: wait}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	for i := range Chunks {
		line, err := r.ReadString('\n')
		if err != nil || line != "chunk\n" {
			t.Fatalf("%s: chunk %d: %q, %v", url, i, line, err)
		}
		if i == Chunks-1 {
			break
		}
		select {
		case s.acks <- struct{}{}:
		case <-time.After(wait):
			t.Fatalf("%s: the handler stopped after chunk %d", url, i)
		}
	}
	// The response ends only once the handler and every middleware around
	// it have returned, so that a caller who reads the series next finds
	// the request counted.
	if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
		t.Fatalf("%s: after the last chunk: %q, %v", url, rest, err)
	}
}

// EchoLine is the handler's end of a connection it took over: it answers
// the upgrade and sends back the first line the client sends.
func EchoLine(brw *bufio.ReadWriter) error {
	if _, err := brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n"); err != nil {
		return err
	}
	if err := brw.Flush(); err != nil {
		return err
	}
	line, err := brw.ReadString('\n')
	if err != nil {
		return err
	}
	if _, err := brw.WriteString(line); err != nil {
		return err
	}
	return brw.Flush()
}

// UpgradeEach upgrades base+how at addr for each of hows and checks that
// the connection echoes.
func UpgradeEach(t testing.TB, addr, base string, hows []string) {
	t.Helper()
	for _, how := range hows {
		if got := Upgrade(t, addr, base+how, "ping "+how); got != "ping "+how {
			t.Errorf("%s: the connection echoed %q", how, got)
		}
	}
}

// Upgrade asks the server at addr to upgrade path, sends line over the
// connection and returns what comes back, which EchoLine makes line.
func Upgrade(t testing.TB, addr, path, line string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(wait))
	if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("%s: status %d, want 101", path, resp.StatusCode)
	}
	if _, err := io.WriteString(conn, strings.TrimSuffix(line, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return strings.TrimSuffix(got, "\n")
}
