package dashtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// DotSegment is a request under a dashboard mounted at /dashboard whose
// path has dot segments, empty segments or escapes, and the answer
// expected: "307 <Location>" or "404" (a JSON error). Mount is the answer
// of an Echo mount (the dashboard itself redirects, under the prefix, the
// path's escaping kept); Mux that of a net/http ServeMux in front
// (http.Handle of the prefix with http.StripPrefix), which cleans the
// path before the dashboard sees it: the standard library's redirect
// escapes % a second time and resolves ".." above the prefix, as URLs do.
type DotSegment struct {
	Path, Mount, Mux string
}

// DotSegments are the cases every adapter's tests run.
var DotSegments = []DotSegment{
	{"/dashboard/api/durations/./hits?precision=60", "307 /dashboard/api/durations/hits?precision=60", "307 /dashboard/api/durations/hits?precision=60"},
	{"/dashboard/./api/health", "307 /dashboard/api/health", "307 /dashboard/api/health"},
	{"/dashboard/api//health", "307 /dashboard/api/health", "307 /dashboard/api/health"},
	{"/dashboard/%5Cevil.com/.", "307 /dashboard/%5Cevil.com", "307 /dashboard/%255Cevil.com"},
	{"/dashboard//evil.com", "307 /dashboard/evil.com", "307 /dashboard/evil.com"},
	{"/dashboard//evil.com/", "307 /dashboard/evil.com/", "307 /dashboard/evil.com/"},
	{"/dashboard/api/counters/a%2Fb/.?precision=5", "307 /dashboard/api/counters/a%2Fb?precision=5", "307 /dashboard/api/counters/a%252Fb?precision=5"},
	{"/dashboard/..", "307 /dashboard/", "307 /"},
	{"/dashboard/../../x", "307 /dashboard/x", "307 /x"},
	{"/dashboard/%2e/api/health", "404", "404"},
	{"/dashboard/api/%2e%2e/%2e%2e/x", "404", "404"},
	{"/dashboard/%2e%2e", "404", "404"},
}

// CheckDotSegments sends each of DotSegments to the server at addr
// (host:port) as it is written, no client cleaning it, and checks the
// answer: Mux's when mux is set, else Mount's. Whatever the case, a
// redirect never names another host.
func CheckDotSegments(t *testing.T, addr string, mux bool) {
	t.Helper()
	for _, tt := range DotSegments {
		t.Run(tt.Path, func(t *testing.T) {
			want := tt.Mount
			if mux {
				want = tt.Mux
			}
			resp, body := rawGet(t, addr, tt.Path)
			loc := resp.Header.Get("Location")
			got := fmt.Sprint(resp.StatusCode)
			if resp.StatusCode/100 == 3 {
				got += " " + loc
			}
			if got != want {
				t.Errorf("GET %s: %s, want %s", tt.Path, got, want)
			}
			if strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") || strings.Contains(loc, "://") {
				t.Errorf("GET %s: Location %q names another host", tt.Path, loc)
			}
			var e struct {
				Error string `json:"error"`
			}
			if resp.StatusCode/100 == 4 && (json.Unmarshal(body, &e) != nil || e.Error == "") {
				t.Errorf("GET %s: %d without a JSON error: %s", tt.Path, resp.StatusCode, body)
			}
		})
	}
}

// rawGet sends GET path over a fresh connection, the request line as is.
func rawGet(t *testing.T, addr, path string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, addr); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}
