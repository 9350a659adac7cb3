package seriesname

import "testing"

// Writers and readers agree, and a reader refuses what no writer makes.
func TestRoute(t *testing.T) {
	for _, tc := range []struct{ method, want string }{
		{"GET", "GET /p/:id"}, {"HEAD", "HEAD /p/:id"}, {"POST", "POST /p/:id"}, {"PUT", "PUT /p/:id"},
		{"PATCH", "PATCH /p/:id"}, {"DELETE", "DELETE /p/:id"}, {"CONNECT", "CONNECT /p/:id"},
		{"OPTIONS", "OPTIONS /p/:id"}, {"TRACE", "TRACE /p/:id"},
		{"get", "OTHER /p/:id"}, {"PROPFIND", "OTHER /p/:id"}, {"", "OTHER /p/:id"}, {"GET /x", "OTHER /p/:id"},
	} {
		got := Route(tc.method, "/p/:id")
		if got != tc.want {
			t.Errorf("Route(%q) = %q, want %q", tc.method, got, tc.want)
		}
		if m, r, ok := SplitRoute(got); !ok || m != Method(tc.method) || r != "/p/:id" {
			t.Errorf("SplitRoute(%q) = %q, %q, %v", got, m, r, ok)
		}
	}
	for _, name := range []string{"PROPFIND /x", "get /x", "GET x", "GET", "hits", "unmatched", " /x"} {
		if _, _, ok := SplitRoute(name); ok {
			t.Errorf("SplitRoute(%q) ok", name)
		}
	}
}

func TestStatus(t *testing.T) {
	for status, want := range map[int]string{0: "other", 99: "other", 100: "1xx", 204: "2xx", 404: "4xx", 599: "5xx", 600: "other", -200: "other"} {
		if got := Status(status); got != "status:"+want {
			t.Errorf("Status(%d) = %q", status, got)
		}
		if c, ok := CutStatus(Status(status)); !ok || c != want {
			t.Errorf("CutStatus(Status(%d)) = %q, %v", status, c, ok)
		}
		name := WithClass("GET /a status:b", status)
		if s, c, ok := CutClass(name); !ok || s != "GET /a status:b" || c != want {
			t.Errorf("CutClass(%q) = %q, %q, %v", name, s, c, ok)
		}
	}
	for _, name := range []string{"status:", "status:6xx", "hits", "GET /a status:2xx"} {
		if _, ok := CutStatus(name); ok {
			t.Errorf("CutStatus(%q) ok", name)
		}
	}
	for _, name := range []string{"status:2xx", " status:2xx", "GET /a status:9xx", "GET /a"} {
		if _, _, ok := CutClass(name); ok {
			t.Errorf("CutClass(%q) ok", name)
		}
	}
}

func TestSlow(t *testing.T) {
	name := Slow("GET /a", "250ms")
	if name != "slow:250ms GET /a" {
		t.Fatalf("Slow = %q", name)
	}
	if s, text, ok := CutSlow(name); !ok || s != "GET /a" || text != "250ms" {
		t.Errorf("CutSlow(%q) = %q, %q, %v", name, s, text, ok)
	}
	for _, name := range []string{"slow:", "slow:1s", "slow: GET /a", "slow:1s ", "GET /a"} {
		if _, _, ok := CutSlow(name); ok {
			t.Errorf("CutSlow(%q) ok", name)
		}
	}
}
