package forum_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/example/forum"
)

func basicLogin(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// answer is what send got back.
type answer struct {
	code   int
	header http.Header
	body   []byte
}

// errorText is the "error" of a JSON error body, or "" if the body is not
// one.
func (a answer) errorText() string {
	var out struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(a.body, &out)
	return out.Error
}

// send makes a request with exactly the headers given (contentType empty:
// none), the way a browser or a script would.
func (f *forumServer) send(method, path, contentType string, body []byte, header map[string]string) answer {
	f.t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, f.base+path, r)
	if err != nil {
		f.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, data}
}

// userCount is how many users the forum stores.
func (f *forumServer) userCount() int {
	f.t.Helper()
	var n int
	if err := f.app.DB().QueryRow("SELECT COUNT(*) FROM forum_users").Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

// The attack of issue 11: a form on another site posting text/plain
// shaped as JSON, and the same with every header a cross-site request
// can carry. None is stored; same-origin and non-browser JSON posts work.
func TestCrossSiteWritesRefused(t *testing.T) {
	f := startForum(t, "sqlite")
	evil := map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
	evilOriginOnly := map[string]string{"Origin": "http://evil.example"}
	sameOrigin := map[string]string{"Origin": f.base, "Sec-Fetch-Site": "same-origin"}
	form := []byte(`{"name":"x"}=`)
	tests := []struct {
		name, method, path, contentType string
		body                            []byte
		header                          map[string]string
		want                            int
	}{
		{"text/plain form from another site", "POST", "/api/users", "text/plain", form, evil, http.StatusForbidden},
		{"text/plain form, old browser sending only Origin", "POST", "/api/users", "text/plain", form, evilOriginOnly, http.StatusForbidden},
		{"JSON from another site", "POST", "/api/users", "application/json", []byte(`{"name":"x"}`), evil, http.StatusForbidden},
		{"JSON, only Origin", "POST", "/api/users", "application/json", []byte(`{"name":"x"}`), evilOriginOnly, http.StatusForbidden},
		{"like from another site", "POST", "/api/posts/1/like", "text/plain", []byte(`{"user":2}=`), evil, http.StatusForbidden},
		{"follow from another site", "POST", "/api/users/3/follow/4", "", nil, evil, http.StatusForbidden},
		{"mark read from another site", "POST", "/api/users/1/unread/read", "", nil, evil, http.StatusForbidden},
		{"reconcile from another site", "POST", "/api/admin/reconcile", "", nil,
			map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site", "Authorization": basicLogin(adminUser, adminPass)},
			http.StatusForbidden},
		{"same-origin text/plain", "POST", "/api/users", "text/plain", form, sameOrigin, http.StatusUnsupportedMediaType},
		{"same-origin JSON", "POST", "/api/users", "application/json", []byte(`{"name":"same"}`), sameOrigin, http.StatusCreated},
		{"JSON from a script (no Origin)", "POST", "/api/users", "application/json", []byte(`{"name":"script"}`), nil, http.StatusCreated},
		{"same-site reads", "GET", "/api/posts/1", "", nil, evil, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.userCount()
			a := f.send(tt.method, tt.path, tt.contentType, tt.body, tt.header)
			if a.code != tt.want {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, a.code, a.body, tt.want)
			}
			if a.code >= 400 {
				if a.errorText() == "" {
					t.Errorf("body %q is not a JSON error", a.body)
				}
				if after := f.userCount(); after != before {
					t.Errorf("refused request stored a user: %d users, were %d", after, before)
				}
			}
		})
	}
	if got := f.counts("post", 1)["likes"]; got != 0 {
		t.Errorf("cross-site like counted: likes = %d", got)
	}
	if got := f.counts("user", 4)["followers"]; got != 0 {
		t.Errorf("cross-site follow counted: followers = %d", got)
	}
}

func TestContentTypeMustBeJSON(t *testing.T) {
	f := startForum(t, "sqlite")
	body := []byte(`{"name":"typed"}`)
	tests := []struct {
		contentType string
		want        int
	}{
		{"", http.StatusUnsupportedMediaType},
		{"text/plain", http.StatusUnsupportedMediaType},
		{"text/plain; charset=utf-8", http.StatusUnsupportedMediaType},
		{"application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"multipart/form-data; boundary=x", http.StatusUnsupportedMediaType},
		{"application/json; charset=iso-8859-1", http.StatusUnsupportedMediaType},
		{"application/jsonx", http.StatusUnsupportedMediaType},
		{"application/json", http.StatusCreated},
		{"application/json; charset=UTF-8", http.StatusCreated},
	}
	for _, tt := range tests {
		t.Run(tt.contentType, func(t *testing.T) {
			a := f.send("POST", "/api/users", tt.contentType, body, nil)
			if a.code != tt.want {
				t.Errorf("Content-Type %q: %d %s, want %d", tt.contentType, a.code, a.body, tt.want)
			}
			if tt.want >= 400 && a.errorText() == "" {
				t.Errorf("body %q is not a JSON error", a.body)
			}
		})
	}
	// A route that takes no body refuses a form-encoded one all the same,
	// and one that does refuses the wrong type even for an empty body.
	if a := f.send("POST", "/api/users/1/follow/2", "text/plain", []byte("x"), nil); a.code != http.StatusUnsupportedMediaType {
		t.Errorf("follow with a text/plain body = %d, want 415", a.code)
	}
	if a := f.send("POST", "/api/users", "text/plain", []byte{}, nil); a.code != http.StatusUnsupportedMediaType {
		t.Errorf("empty text/plain body = %d, want 415", a.code)
	}
}

func TestStrictDecoding(t *testing.T) {
	f := startForum(t, "sqlite")
	tests := []struct {
		name, path, body string
		want             int
	}{
		{"unknown field", "/api/users", `{"name":"a","admin":true}`, http.StatusBadRequest},
		{"trailing =", "/api/users", `{"name":"a"}=`, http.StatusBadRequest},
		{"second value", "/api/users", `{"name":"a"}{"name":"b"}`, http.StatusBadRequest},
		{"trailing garbage", "/api/users", `{"name":"a"} x`, http.StatusBadRequest},
		{"NUL in name", "/api/users", `{"name":"a\u0000b"}`, http.StatusBadRequest},
		{"escape in name", "/api/users", `{"name":"a\u001b[31mb"}`, http.StatusBadRequest},
		{"newline in name", "/api/users", `{"name":"a\nb"}`, http.StatusBadRequest},
		{"C1 control in name", "/api/users", `{"name":"a\u0085b"}`, http.StatusBadRequest},
		{"bidi override in name", "/api/users", `{"name":"a\u202eb"}`, http.StatusBadRequest},
		{"invalid UTF-8", "/api/users", "{\"name\":\"a\xff\xfeb\"}", http.StatusBadRequest},
		{"DEL in title", "/api/posts", `{"author":1,"title":"a\u007fb"}`, http.StatusBadRequest},
		{"bell in reply", "/api/posts/1/replies", `{"user":1,"text":"a\u0007b"}`, http.StatusBadRequest},
		{"text in a like", "/api/posts/1/like", `{"user":1,"text":"hi"}`, http.StatusBadRequest},
		{"empty body", "/api/users", ``, http.StatusBadRequest},
		{"array", "/api/users", `[]`, http.StatusBadRequest},
		{"over the limit", "/api/users", `{"name":"` + strings.Repeat("x", forum.DefaultBodyLimit) + `"}`, http.StatusRequestEntityTooLarge},
		{"trailing whitespace", "/api/users", "{\"name\":\"ok\"}\n ", http.StatusCreated},
		{"CJK and emoji", "/api/users", `{"name":"名前 😀 όνομα"}`, http.StatusCreated},
		{"lines in a reply", "/api/posts/1/replies", `{"user":1,"text":"first line\nsecond\tline"}`, http.StatusCreated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.userCount()
			a := f.send("POST", tt.path, "application/json", []byte(tt.body), nil)
			if a.code != tt.want {
				t.Fatalf("%d %s, want %d", a.code, a.body, tt.want)
			}
			if tt.want >= 400 {
				if a.errorText() == "" {
					t.Errorf("body %q is not a JSON error", a.body)
				}
				if f.userCount() != before {
					t.Error("a refused body stored a user")
				}
			}
		})
	}
	// The limit holds on routes that read no body too.
	if a := f.send("POST", "/api/users/1/follow/2", "application/json", bytes.Repeat([]byte(" "), forum.DefaultBodyLimit+1), nil); a.code != http.StatusRequestEntityTooLarge {
		t.Errorf("follow with a body over the limit = %d, want 413", a.code)
	}
	// A body with no declared length is cut off at the limit as well.
	req, _ := http.NewRequest("POST", f.base+"/api/users", io.MultiReader(
		strings.NewReader(`{"name":"`), strings.NewReader(strings.Repeat("x", 2*forum.DefaultBodyLimit)), strings.NewReader(`"}`)))
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked body over the limit = %d, want 413", resp.StatusCode)
	}
}

// Admin routes, the forum's and any added later under /api/admin, sit
// behind the login when there is one and are off when there is none.
func TestAdminRoutes(t *testing.T) {
	addLater := func(e *echo.Echo) {
		ok := func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]bool{"ok": true}) }
		e.POST("/api/admin/flush", ok)
		e.Group("/api").Group("/admin").GET("/stats", ok)
	}
	paths := []struct{ method, path string }{
		{"POST", "/api/admin/reconcile"}, {"POST", "/api/admin/flush"}, {"GET", "/api/admin/stats"},
	}

	t.Run("off without a login", func(t *testing.T) {
		f := startForumWith(t, forum.Config{DatabaseURL: "sqlite:" + filepath.Join(t.TempDir(), "forum.db")})
		addLater(f.e)
		for _, p := range paths {
			for _, login := range []string{"", basicLogin(adminUser, adminPass)} {
				a := f.send(p.method, p.path, "", nil, map[string]string{"Authorization": login})
				if a.code != http.StatusForbidden || !strings.Contains(a.errorText(), "DASHBOARD_USER") {
					t.Errorf("%s %s (login %q) = %d %s, want 403 saying how to turn it on", p.method, p.path, login, a.code, a.body)
				}
			}
		}
	})

	t.Run("behind the login", func(t *testing.T) {
		f := startForum(t, "sqlite")
		addLater(f.e)
		logins := []struct {
			name, header string
			want         int
		}{
			{"none", "", http.StatusUnauthorized},
			{"wrong password", basicLogin(adminUser, "nope"), http.StatusUnauthorized},
			{"wrong user", basicLogin("dev", adminPass), http.StatusUnauthorized},
			{"right", basicLogin(adminUser, adminPass), http.StatusOK},
		}
		for _, p := range paths {
			for _, l := range logins {
				a := f.send(p.method, p.path, "", nil, map[string]string{"Authorization": l.header})
				if a.code != l.want {
					t.Errorf("%s %s, login %s = %d %s, want %d", p.method, p.path, l.name, a.code, a.body, l.want)
				}
			}
		}
		// The forum's own routes need no login.
		if a := f.send("GET", "/api/posts", "", nil, nil); a.code != http.StatusOK {
			t.Errorf("GET /api/posts = %d", a.code)
		}
	})
}

// Every answer carries the security headers: pages, JSON, errors of every
// kind, and answers the guards give themselves.
func TestSecurityHeaders(t *testing.T) {
	f := startForum(t, "sqlite")
	tests := []struct {
		name, method, path, contentType, body string
		header                                map[string]string
		want                                  int
		page                                  bool
	}{
		{"home page", "GET", "/", "", "", nil, http.StatusOK, true},
		{"post page", "GET", "/posts/1", "", "", nil, http.StatusOK, true},
		{"JSON", "GET", "/api/posts", "", "", nil, http.StatusOK, false},
		{"created", "POST", "/api/users", "application/json", `{"name":"h"}`, nil, http.StatusCreated, false},
		{"bad request", "GET", "/api/posts/abc", "", "", nil, http.StatusBadRequest, false},
		{"unknown post", "GET", "/api/posts/999", "", "", nil, http.StatusNotFound, false},
		{"unknown post page", "GET", "/posts/999", "", "", nil, http.StatusNotFound, false},
		{"no such route", "GET", "/no/such/page", "", "", nil, http.StatusNotFound, false},
		{"method not allowed", "DELETE", "/api/posts/1", "", "", nil, http.StatusMethodNotAllowed, false},
		{"cross-site", "POST", "/api/users", "application/json", `{"name":"h"}`, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden, false},
		{"wrong type", "POST", "/api/users", "text/plain", `{"name":"h"}`, nil, http.StatusUnsupportedMediaType, false},
		{"too large", "POST", "/api/users", "application/json", strings.Repeat(" ", forum.DefaultBodyLimit+1), nil, http.StatusRequestEntityTooLarge, false},
		{"no login", "POST", "/api/admin/reconcile", "", "", nil, http.StatusUnauthorized, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			if tt.body != "" {
				body = []byte(tt.body)
			}
			a := f.send(tt.method, tt.path, tt.contentType, body, tt.header)
			if a.code != tt.want {
				t.Fatalf("%d %s, want %d", a.code, a.body, tt.want)
			}
			for k, v := range map[string]string{
				"X-Content-Type-Options": "nosniff",
				"X-Frame-Options":        "DENY",
				"Referrer-Policy":        "same-origin",
			} {
				if got := a.header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			csp := a.header.Get("Content-Security-Policy")
			if tt.page && (!strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'")) {
				t.Errorf("page CSP %q", csp)
			}
		})
	}
	// The pages' stylesheet is served from the forum, as their CSP allows.
	if a := f.send("GET", "/forum.css", "", nil, nil); a.code != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "text/css") {
		t.Errorf("GET /forum.css = %d %s", a.code, a.header.Get("Content-Type"))
	}
}

func TestProtectConfigValidation(t *testing.T) {
	for _, cfg := range []forum.ProtectConfig{
		{AdminPrefix: "api/admin"},
		{AdminPrefix: "/api/admin/"},
		{BodyLimit: -1},
		{TrustedOrigins: []string{"not a URL"}},
	} {
		if _, err := cfg.ToMiddleware(); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
	if _, err := forum.DefaultProtectConfig.ToMiddleware(); err != nil {
		t.Errorf("default config: %v", err)
	}
}
