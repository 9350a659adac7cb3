package dashboard_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/dashboard"
)

var configRE = regexp.MustCompile(`(?s)<script type="application/json" id="pulse-config">(.*?)</script>`)

func TestPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{title: `Ops <b>"&"</b> </script>`, poll: 750 * time.Millisecond, overview: 4})
	r := get(t, f.root)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("status %d, Content-Type %q", r.status, r.header.Get("Content-Type"))
	}
	for h, want := range map[string]string{
		"X-Content-Type-Options": "nosniff",
		"Cache-Control":          "no-cache",
		"X-Frame-Options":        "DENY",
		"Referrer-Policy":        "same-origin",
	} {
		if got := r.header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	csp := r.header.Get("Content-Security-Policy")
	for _, part := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, part) {
			t.Errorf("CSP %q lacks %q", csp, part)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP allows inline code: %q", csp)
	}

	// The title is escaped wherever it appears; nothing closes a script.
	if strings.Contains(r.body, "<b>") || strings.Count(r.body, "</script>") != strings.Count(r.body, "<script") {
		t.Errorf("title not escaped:\n%s", r.body)
	}
	if !strings.Contains(r.body, "<title>Ops &lt;b&gt;&#34;&amp;&#34;&lt;/b&gt; &lt;/script&gt;</title>") {
		t.Errorf("escaped title missing:\n%s", r.body)
	}
	// No inline script: every script element either loads a file or is
	// data (JSON).
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(r.body, -1) {
		if !strings.Contains(tag, `src="`) && !strings.Contains(tag, `type="application/json"`) {
			t.Errorf("inline script %s", tag)
		}
	}
	// All URLs are relative to the root, but for echarts' pinned CDN URL
	// in a build that does not embed it.
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(r.body, -1) {
		if m[1] == dashboard.EchartsCDN && !dashboard.EchartsEmbedded() {
			continue
		}
		if strings.HasPrefix(m[1], "/") || strings.Contains(m[1], "://") {
			t.Errorf("absolute URL %q", m[1])
		}
	}

	m := configRE.FindStringSubmatch(r.body)
	if m == nil {
		t.Fatal("no page config")
	}
	var cfg struct {
		Title      string `json:"title"`
		PollMillis int    `json:"pollMillis"`
		Overview   int    `json:"overview"`
		Entities   bool   `json:"entities"`
		Health     bool   `json:"health"`
		Precisions []struct {
			Seconds int    `json:"seconds"`
			Label   string `json:"label"`
			Last    int    `json:"last"`
			Window  string `json:"window"`
		} `json:"precisions"`
		ChartInit map[string]string `json:"chartInit"`
		Chart     json.RawMessage   `json:"chart"`
		Visitors  struct {
			Name       string `json:"name"`
			Precisions []int  `json:"precisions"`
		} `json:"visitors"`
	}
	if err := json.Unmarshal([]byte(m[1]), &cfg); err != nil {
		t.Fatalf("page config is not JSON: %v\n%s", err, m[1])
	}
	if cfg.Title != `Ops <b>"&"</b> </script>` || cfg.PollMillis != 750 || cfg.Overview != 4 || !cfg.Entities || !cfg.Health {
		t.Errorf("page config %+v", cfg)
	}
	// The page asks for the visitors of the middlewares' total, where
	// they are kept only.
	if v := cfg.Visitors; v.Name != "hits" || fmt.Sprint(v.Precisions) != "[60 300 3600 86400]" {
		t.Errorf("visitors config %+v", v)
	}
	var labels []string
	for _, p := range cfg.Precisions {
		labels = append(labels, p.Label+" over "+p.Window)
	}
	if got := strings.Join(labels, ", "); got != "5 s over 10 min, 1 min over 2 h, 5 min over 10 h, 1 h over 5 d, 5 h over 25 d, 1 d over 120 d" {
		t.Errorf("precisions: %s", got)
	}
	// The config carries no echarts option: static/options.js builds them
	// all. go-echarts gives how each chart is initialised.
	if cfg.Chart != nil || strings.Contains(m[1], "xAxis") || strings.Contains(m[1], "series") {
		t.Errorf("the page config carries chart options: %s", m[1])
	}
	if cfg.ChartInit["renderer"] != "canvas" || cfg.ChartInit["theme"] == "" {
		t.Errorf("chart init: %v", cfg.ChartInit)
	}
	if !strings.Contains(r.body, `data-precision="3600"`) || !strings.Contains(r.body, `id="entity-kind"`) {
		t.Error("precision selector or entity panel missing")
	}

	bare := newFixture(t, fixtureOptions{noEntities: true, noHealth: true, noTraffic: true})
	body := get(t, bare.root).body
	if strings.Contains(body, `id="entities"`) || strings.Contains(body, `id="entity-kind"`) {
		t.Error("without Entities the page must have no entity panel")
	}
	if !strings.Contains(body, "<title>Pulse</title>") {
		t.Error("default title missing")
	}
}

func TestPageEchartsSource(t *testing.T) {
	f := newFixture(t, fixtureOptions{noTraffic: true})
	body := get(t, f.root).body
	if dashboard.EchartsEmbedded() {
		if !regexp.MustCompile(`<script src="static/echarts\.min\.js\?v=[0-9a-f]{12}" defer>`).MatchString(body) {
			t.Error("embedded echarts is not loaded from static/")
		}
		if strings.Contains(body, "cdn.jsdelivr.net") || strings.Contains(body, "://") {
			t.Error("the page mentions a remote host although echarts is embedded")
		}
	} else {
		want := `<script src="` + dashboard.EchartsCDN + `" integrity="` + dashboard.EchartsIntegrity + `" crossorigin="anonymous" defer>`
		if !strings.Contains(body, want) {
			t.Error("without embedded echarts the page must load the pinned copy with its integrity")
		}
		t.Log("echarts is not embedded: run `make assets` to test the offline page")
	}
}

func TestRootRedirects(t *testing.T) {
	f := newFixture(t, fixtureOptions{noTraffic: true})
	for _, tt := range []struct{ path, want string }{
		{"/dashboard", "./dashboard/"},
		{"/dashboard?x=1", "./dashboard/?x=1"},
	} {
		r := get(t, f.server.URL+tt.path)
		if r.status != http.StatusFound || r.header.Get("Location") != tt.want {
			t.Errorf("GET %s: %d Location %q, want 302 %q", tt.path, r.status, r.header.Get("Location"), tt.want)
		}
	}
	// A client following it lands on the page.
	resp, err := http.Get(f.server.URL + "/dashboard")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/dashboard/" {
		t.Errorf("followed to %s: %d", resp.Request.URL.Path, resp.StatusCode)
	}
}

// TestHandlerUnderStripPrefix mounts the net/http handler under a prefix,
// as a reverse proxy or a mux would, and checks the root, the redirect and
// an escaped series name.
func TestHandlerUnderStripPrefix(t *testing.T) {
	f := newFixture(t, fixtureOptions{noEntities: true})
	h, err := dashboard.Handler(dashboard.Config{Store: f.store, Health: f.rec})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ops/pulse/", http.StripPrefix("/ops/pulse", h))
	mux.Handle("/ops/pulse", http.StripPrefix("/ops/pulse", h))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	if r := get(t, srv.URL+"/ops/pulse"); r.status != http.StatusFound || r.header.Get("Location") != "./pulse/" {
		t.Errorf("root without slash: %d %q", r.status, r.header.Get("Location"))
	}
	if r := get(t, srv.URL+"/ops/pulse/"); r.status != http.StatusOK || !strings.Contains(r.body, "pulse-config") {
		t.Errorf("root: %d", r.status)
	}
	r := get(t, srv.URL+"/ops/pulse/api/counters/GET%20%2Fposts%2F%3Aid?precision=60")
	if r.status != http.StatusOK || !strings.Contains(r.body, `"name":"GET /posts/:id"`) || !strings.Contains(r.body, `"count":5`) {
		t.Errorf("escaped name under a prefix: %d %s", r.status, r.body)
	}
	r = get(t, srv.URL+"/ops/pulse/api/counters/100%25?precision=5")
	checkError(t, r, http.StatusNotFound) // "100%": decoded once, not twice
	if r := get(t, srv.URL+"/ops/pulse/static/main.js"); r.status != http.StatusOK {
		t.Errorf("asset under a prefix: %d", r.status)
	}
}

func TestAssets(t *testing.T) {
	f := newFixture(t, fixtureOptions{noTraffic: true})
	page := get(t, f.root).body
	version := regexp.MustCompile(`<script type="module" src="static/main\.js\?v=([0-9a-f]+)">`).FindStringSubmatch(page)
	if version == nil {
		t.Fatal("page does not load a versioned main.js as a module")
	}

	r := get(t, f.root+"static/main.js?v="+version[1])
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/javascript; charset=utf-8" ||
		r.header.Get("X-Content-Type-Options") != "nosniff" || !regexp.MustCompile(`from './poll\.js\?v=[0-9a-f]{12}'`).MatchString(r.body) {
		t.Fatalf("main.js: %d %v", r.status, r.header)
	}
	if cc := r.header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Errorf("versioned asset Cache-Control %q", cc)
	}
	if cc := get(t, f.root+"static/main.js").header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("unversioned asset Cache-Control %q", cc)
	}
	etag := r.header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if r := do(t, http.MethodGet, f.root+"static/main.js", http.Header{"If-None-Match": {etag}}); r.status != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", r.status)
	}
	if ct := get(t, f.root+"static/dashboard.css").header.Get("Content-Type"); ct != "text/css; charset=utf-8" {
		t.Errorf("css Content-Type %q", ct)
	}

	gz := do(t, http.MethodGet, f.root+"static/main.js", http.Header{"Accept-Encoding": {"gzip"}})
	if gz.header.Get("Content-Encoding") != "gzip" || !strings.Contains(gz.header.Get("Vary"), "Accept-Encoding") {
		t.Fatalf("gzip not offered: %v", gz.header)
	}
	zr, err := gzip.NewReader(bytes.NewReader([]byte(gz.body)))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if string(plain) != r.body {
		t.Error("gzip body differs from the file")
	}
	if r := do(t, http.MethodGet, f.root+"static/main.js", http.Header{"Accept-Encoding": {"gzip;q=0"}}); r.header.Get("Content-Encoding") != "" {
		t.Error("gzip sent although refused")
	}

	checkError(t, get(t, f.root+"static/nope.js"), http.StatusNotFound)
	checkError(t, get(t, f.root+"static/..%2Fpage.html"), http.StatusNotFound)
	if dashboard.EchartsEmbedded() {
		if r := get(t, f.root+"static/echarts.min.js"); r.status != http.StatusOK || len(r.body) < 500000 {
			t.Errorf("echarts.min.js: %d, %d bytes", r.status, len(r.body))
		}
	} else {
		checkError(t, get(t, f.root+"static/echarts.min.js"), http.StatusNotFound)
	}
}

// TestDashboardTrafficIsNotCounted: a net/http app counting every request
// with pulsehttp counts its own routes, not the dashboard's.
func TestDashboardTrafficIsNotCounted(t *testing.T) {
	f := newFixture(t, fixtureOptions{noTraffic: true})
	if r := get(t, f.server.URL+"/app"); r.status != http.StatusOK {
		t.Fatalf("app: %d", r.status)
	}
	paths := []string{"", "api/counters", "api/counters/hits?precision=5", "api/overview?precision=5", "api/health",
		"api/entities", "api/entities/post/7", "api/entities/post/top?field=views", "static/main.js",
		"api/counters/hits", "api/nothing", "no/such/page"}
	for _, p := range paths {
		get(t, f.root+p)
		do(t, http.MethodPost, f.root+p, nil)
	}
	get(t, f.server.URL+"/dashboard") // the redirect
	f.flush(t)
	if got := f.srv.HashSum("count:86400:hits"); got != 1 {
		t.Errorf("hits = %d after one app request and %d dashboard requests, want 1", got, 2*len(paths)+1)
	}
	// The app's own 404s still count: the Skip is the dashboard's alone.
	get(t, f.server.URL+"/nothing")
	f.flush(t)
	if got := f.srv.HashSum("count:86400:hits"); got != 2 {
		t.Errorf("hits = %d after an app 404, want 2", got)
	}
}
