package dashboard

import (
	"strings"
	"testing"

	"github.com/pulse-dev/pulse/internal/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestPageWithoutEmbeddedEcharts renders the page as a build without
// `make assets` would: echarts from go-echarts' host, allowed by the CSP,
// and a visible notice.
func TestPageWithoutEmbeddedEcharts(t *testing.T) {
	srv := redistest.Start(t)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if saved, ok := assets[echartsFile]; ok {
		delete(assets, echartsFile)
		t.Cleanup(func() { assets[echartsFile] = saved })
	}
	p, err := newPageData(Config{Store: store, Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	html := string(p.html)
	const remote = "https://go-echarts.github.io/go-echarts-assets/assets/echarts.min.js"
	if !strings.Contains(html, `<script src="`+remote+`" defer>`) {
		t.Errorf("echarts not loaded from go-echarts' host:\n%s", html)
	}
	if !strings.Contains(html, `id="assets-notice"`) || !strings.Contains(html, "make assets") {
		t.Error("no visible notice")
	}
	if !strings.Contains(p.csp, "script-src 'self' https://go-echarts.github.io;") {
		t.Errorf("CSP %q does not allow the host", p.csp)
	}
	if EchartsEmbedded() {
		t.Error("EchartsEmbedded true without the file")
	}
}
