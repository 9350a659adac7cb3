package dashboard

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestPageWithoutEmbeddedEcharts renders the page as a module user's build
// has it, with no copy of echarts: echarts comes from the pinned, versioned
// CDN URL with its integrity hash, the CSP names that origin only, and the
// notice for a failed load says how to embed a copy.
func TestPageWithoutEmbeddedEcharts(t *testing.T) {
	srv := redistest.Start(t)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Config{Store: store, Title: "t"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPageData(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	html := string(p.html)
	want := `<script src="` + EchartsCDN + `" integrity="` + EchartsIntegrity + `" crossorigin="anonymous" defer>`
	if !strings.Contains(html, want) {
		t.Errorf("echarts not loaded from %s with its integrity:\n%s", EchartsCDN, html)
	}
	if !strings.Contains(EchartsCDN, "@"+EchartsVersion+"/") {
		t.Errorf("CDN URL %s is not versioned", EchartsCDN)
	}
	if !strings.Contains(html, `id="assets-notice"`) || !strings.Contains(html, "dashboard.Config.Echarts") {
		t.Error("no notice saying how to embed echarts")
	}
	if !strings.Contains(p.csp, "script-src 'self' https://cdn.jsdelivr.net;") {
		t.Errorf("CSP %q does not allow exactly the CDN's origin", p.csp)
	}
	if strings.Count(p.csp, "https://") != 1 {
		t.Errorf("CSP %q names more than one origin", p.csp)
	}
}

// TestPageWithAppEcharts: a copy the app gives is served by the dashboard,
// and the page names no other origin.
func TestPageWithAppEcharts(t *testing.T) {
	srv := redistest.Start(t)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newServer(Config{Store: store, Echarts: []byte("window.echarts = {};")})
	if err != nil {
		t.Fatal(err)
	}
	html := string(s.page.html)
	if !strings.Contains(html, `<script src="static/echarts.min.js?v=`+s.echarts.version+`" defer>`) {
		t.Errorf("the app's echarts is not served from static/:\n%s", html)
	}
	if strings.Contains(html, "cdn.jsdelivr.net") || strings.Contains(s.page.csp, "https://") {
		t.Error("the page names the CDN although the app embeds echarts")
	}
}

// TestEchartsPin checks the pinned version against package.json and, when
// `make assets` has fetched the file from npm, the integrity hash against
// the file itself.
func TestEchartsPin(t *testing.T) {
	raw, err := os.ReadFile("assets/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if got := pkg.Dependencies["echarts"]; got != EchartsVersion {
		t.Errorf("package.json pins echarts %q, EchartsVersion is %q", got, EchartsVersion)
	}
	a := assets[echartsFile]
	if a == nil {
		t.Skip("echarts.min.js is not embedded: run `make assets` to check EchartsIntegrity")
	}
	sum := sha512.Sum384(a.body)
	if got := "sha384-" + base64.StdEncoding.EncodeToString(sum[:]); got != EchartsIntegrity {
		t.Errorf("fetched echarts.min.js hashes to %s, EchartsIntegrity is %s", got, EchartsIntegrity)
	}
}

// TestPageVisitorsSeries: the page asks for the visitors of the series
// the app named, "hits" by default.
func TestPageVisitorsSeries(t *testing.T) {
	srv := redistest.Start(t)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ set, want string }{{"", "hits"}, {"requests", "requests"}} {
		cfg, err := Config{Store: store, VisitorsSeries: tt.set}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		p, err := newPageData(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := `"visitors":{"name":"` + tt.want + `"`
		if !strings.Contains(string(p.html), want) {
			t.Errorf("VisitorsSeries %q: page config lacks %s", tt.set, want)
		}
	}
}
