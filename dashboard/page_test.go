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
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
)

var configRE = regexp.MustCompile(`(?s)<script type="application/json" id="pulse-config">(.*?)</script>`)

func TestPage(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{Title: `Ops <b>"&"</b> </script>`, Poll: 750 * time.Millisecond, Overview: 4})
	r := dashtest.Get(t, f.Root)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("status %d, Content-Type %q", r.Status, r.Header.Get("Content-Type"))
	}
	for h, want := range map[string]string{
		"X-Content-Type-Options": "nosniff",
		"Cache-Control":          "no-cache",
		"X-Frame-Options":        "DENY",
		"Referrer-Policy":        "same-origin",
	} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	csp := r.Header.Get("Content-Security-Policy")
	for _, part := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, part) {
			t.Errorf("CSP %q lacks %q", csp, part)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP allows inline code: %q", csp)
	}

	// The title is escaped wherever it appears; nothing closes a script.
	if strings.Contains(r.Body, "<b>") || strings.Count(r.Body, "</script>") != strings.Count(r.Body, "<script") {
		t.Errorf("title not escaped:\n%s", r.Body)
	}
	if !strings.Contains(r.Body, "<title>Ops &lt;b&gt;&#34;&amp;&#34;&lt;/b&gt; &lt;/script&gt;</title>") {
		t.Errorf("escaped title missing:\n%s", r.Body)
	}
	// No inline script: every script element either loads a file or is
	// data (JSON).
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(r.Body, -1) {
		if !strings.Contains(tag, `src="`) && !strings.Contains(tag, `type="application/json"`) {
			t.Errorf("inline script %s", tag)
		}
	}
	// All URLs are relative to the root, but for echarts' pinned CDN URL
	// in a build that does not embed it.
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(r.Body, -1) {
		if m[1] == dashboard.EchartsCDN && !dashboard.EchartsEmbedded() {
			continue
		}
		if strings.HasPrefix(m[1], "/") || strings.Contains(m[1], "://") {
			t.Errorf("absolute URL %q", m[1])
		}
	}

	m := configRE.FindStringSubmatch(r.Body)
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
	if !strings.Contains(r.Body, `data-precision="3600"`) || !strings.Contains(r.Body, `id="entity-kind"`) {
		t.Error("precision selector or entity panel missing")
	}

	bare := dashtest.New(t, dashtest.Options{NoEntities: true, NoHealth: true, NoTraffic: true})
	body := dashtest.Get(t, bare.Root).Body
	if strings.Contains(body, `id="entities"`) || strings.Contains(body, `id="entity-kind"`) {
		t.Error("without Entities the page must have no entity panel")
	}
	if !strings.Contains(body, "<title>Pulse</title>") {
		t.Error("default title missing")
	}
}

func TestPageEchartsSource(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{NoTraffic: true})
	body := dashtest.Get(t, f.Root).Body
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
	f := dashtest.New(t, dashtest.Options{NoTraffic: true})
	for _, tt := range []struct{ path, want string }{
		{"/dashboard", "./dashboard/"},
		{"/dashboard?x=1", "./dashboard/?x=1"},
	} {
		r := dashtest.Get(t, f.Server.URL+tt.path)
		if r.Status != http.StatusFound || r.Header.Get("Location") != tt.want {
			t.Errorf("GET %s: %d Location %q, want 302 %q", tt.path, r.Status, r.Header.Get("Location"), tt.want)
		}
	}
	// A client following it lands on the page.
	resp, err := http.Get(f.Server.URL + "/dashboard")
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
	f := dashtest.New(t, dashtest.Options{NoEntities: true})
	h, err := dashboard.Handler(dashboard.Config{Store: f.Store, Health: f.Rec})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ops/pulse/", http.StripPrefix("/ops/pulse", h))
	mux.Handle("/ops/pulse", http.StripPrefix("/ops/pulse", h))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	if r := dashtest.Get(t, srv.URL+"/ops/pulse"); r.Status != http.StatusFound || r.Header.Get("Location") != "./pulse/" {
		t.Errorf("root without slash: %d %q", r.Status, r.Header.Get("Location"))
	}
	if r := dashtest.Get(t, srv.URL+"/ops/pulse/"); r.Status != http.StatusOK || !strings.Contains(r.Body, "pulse-config") {
		t.Errorf("root: %d", r.Status)
	}
	r := dashtest.Get(t, srv.URL+"/ops/pulse/api/counters/GET%20%2Fposts%2F%3Aid?precision=60")
	if r.Status != http.StatusOK || !strings.Contains(r.Body, `"name":"GET /posts/:id"`) || !strings.Contains(r.Body, `"count":5`) {
		t.Errorf("escaped name under a prefix: %d %s", r.Status, r.Body)
	}
	r = dashtest.Get(t, srv.URL+"/ops/pulse/api/counters/100%25?precision=5")
	checkError(t, r, http.StatusNotFound) // "100%": decoded once, not twice
	if r := dashtest.Get(t, srv.URL+"/ops/pulse/static/main.js"); r.Status != http.StatusOK {
		t.Errorf("asset under a prefix: %d", r.Status)
	}
}

func TestAssets(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{NoTraffic: true})
	page := dashtest.Get(t, f.Root).Body
	version := regexp.MustCompile(`<script type="module" src="static/main\.js\?v=([0-9a-f]+)">`).FindStringSubmatch(page)
	if version == nil {
		t.Fatal("page does not load a versioned main.js as a module")
	}

	r := dashtest.Get(t, f.Root+"static/main.js?v="+version[1])
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "text/javascript; charset=utf-8" ||
		r.Header.Get("X-Content-Type-Options") != "nosniff" || !regexp.MustCompile(`from './poll\.js\?v=[0-9a-f]{12}'`).MatchString(r.Body) {
		t.Fatalf("main.js: %d %v", r.Status, r.Header)
	}
	if cc := r.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Errorf("versioned asset Cache-Control %q", cc)
	}
	if cc := dashtest.Get(t, f.Root+"static/main.js").Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("unversioned asset Cache-Control %q", cc)
	}
	etag := r.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if r := dashtest.Do(t, http.MethodGet, f.Root+"static/main.js", http.Header{"If-None-Match": {etag}}); r.Status != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", r.Status)
	}
	if ct := dashtest.Get(t, f.Root+"static/dashboard.css").Header.Get("Content-Type"); ct != "text/css; charset=utf-8" {
		t.Errorf("css Content-Type %q", ct)
	}

	gz := dashtest.Do(t, http.MethodGet, f.Root+"static/main.js", http.Header{"Accept-Encoding": {"gzip"}})
	if gz.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(gz.Header.Get("Vary"), "Accept-Encoding") {
		t.Fatalf("gzip not offered: %v", gz.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader([]byte(gz.Body)))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if string(plain) != r.Body {
		t.Error("gzip body differs from the file")
	}
	if r := dashtest.Do(t, http.MethodGet, f.Root+"static/main.js", http.Header{"Accept-Encoding": {"gzip;q=0"}}); r.Header.Get("Content-Encoding") != "" {
		t.Error("gzip sent although refused")
	}

	checkError(t, dashtest.Get(t, f.Root+"static/nope.js"), http.StatusNotFound)
	checkError(t, dashtest.Get(t, f.Root+"static/..%2Fpage.html"), http.StatusNotFound)
	if dashboard.EchartsEmbedded() {
		if r := dashtest.Get(t, f.Root+"static/echarts.min.js"); r.Status != http.StatusOK || len(r.Body) < 500000 {
			t.Errorf("echarts.min.js: %d, %d bytes", r.Status, len(r.Body))
		}
	} else {
		checkError(t, dashtest.Get(t, f.Root+"static/echarts.min.js"), http.StatusNotFound)
	}
}

// TestDashboardTrafficIsNotCounted: a net/http app counting every request
// with pulsehttp counts its own routes, not the dashboard's.
func TestDashboardTrafficIsNotCounted(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{NoTraffic: true})
	if r := dashtest.Get(t, f.Server.URL+"/app"); r.Status != http.StatusOK {
		t.Fatalf("app: %d", r.Status)
	}
	paths := []string{"", "api/counters", "api/counters/hits?precision=5", "api/overview?precision=5", "api/health",
		"api/entities", "api/entities/post/7", "api/entities/post/top?field=views", "static/main.js",
		"api/counters/hits", "api/nothing", "no/such/page"}
	for _, p := range paths {
		dashtest.Get(t, f.Root+p)
		dashtest.Do(t, http.MethodPost, f.Root+p, nil)
	}
	dashtest.Get(t, f.Server.URL+"/dashboard") // the redirect
	f.Flush(t)
	if got := f.Srv.HashSum("count:86400:hits"); got != 1 {
		t.Errorf("hits = %d after one app request and %d dashboard requests, want 1", got, 2*len(paths)+1)
	}
	// The app's own 404s still count: the Skip is the dashboard's alone.
	dashtest.Get(t, f.Server.URL+"/nothing")
	f.Flush(t)
	if got := f.Srv.HashSum("count:86400:hits"); got != 2 {
		t.Errorf("hits = %d after an app 404, want 2", got)
	}
}
