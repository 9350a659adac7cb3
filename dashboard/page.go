package dashboard

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/go-echarts/go-echarts/v2/opts"
)

//go:embed page.html
var pageTemplate string

var pageTmpl = template.Must(template.New("page").Parse(pageTemplate))

// precisionView is one choice of the precision selector.
type precisionView struct {
	Seconds int    `json:"seconds"`
	Label   string `json:"label"`  // "5 s", "1 min"
	Last    int    `json:"last"`   // buckets charted
	Window  string `json:"window"` // what they span: "10 min"
}

// pageConfig is handed to the page's script as JSON.
type pageConfig struct {
	Title      string          `json:"title"`
	PollMillis int64           `json:"pollMillis"`
	Overview   int             `json:"overview"`
	MaxPinned  int             `json:"maxPinned"`
	Precisions []precisionView `json:"precisions"`
	Entities   bool            `json:"entities"`
	Health     bool            `json:"health"`
	// Alerts: Config.Alerts is set, so the page polls api/alerts.
	Alerts bool `json:"alerts"`
	// Visitors says whose unique visitors the page shows, and at which
	// precisions: the others keep none, which the page says rather than
	// asks for.
	Visitors visitorsConfig `json:"visitors"`
	// Echarts is where the page loads echarts from, for the notice shown
	// when it fails to load.
	Echarts string `json:"echarts"`
	// ChartInit is how the page initialises each chart's container. The
	// options of the charts are all built by static/options.js: the server
	// sends data and settings, never option fragments.
	ChartInit chartInit `json:"chartInit"`
}

// visitorsConfig names the series whose visitors the page shows, the
// middlewares' total of every request, and the precisions keeping them.
type visitorsConfig struct {
	Name       string `json:"name"`
	Precisions []int  `json:"precisions"`
}

// pageData is the rendered page and the headers it is served with.
type pageData struct {
	html []byte
	csp  string
}

// windowBuckets is how many buckets the page charts at every precision:
// the 120 samples of the "Redis in Action" design, which the cleaner
// keeps, so no chart shows trimmed buckets as a quiet time.
const windowBuckets = 120

// humanSeconds writes a duration in the largest whole unit.
func humanSeconds(s int) string {
	switch {
	case s%86400 == 0:
		return fmt.Sprintf("%d d", s/86400)
	case s%3600 == 0:
		return fmt.Sprintf("%d h", s/3600)
	case s%60 == 0:
		return fmt.Sprintf("%d min", s/60)
	}
	return fmt.Sprintf("%d s", s)
}

// chartInit is what echarts.init takes besides the element: the theme
// and the renderer. They come from go-echarts' chart initialisation, so
// each chart is started as a go-echarts page starts its charts, with the
// canvas renderer and go-echarts' default theme.
type chartInit struct {
	Theme    string `json:"theme"`
	Renderer string `json:"renderer"`
}

func newChartInit() chartInit {
	init := opts.Initialization{Renderer: "canvas"}
	init.Validate() // go-echarts' defaults for what is unset
	return chartInit{Theme: init.Theme, Renderer: init.Renderer}
}

// newPageData renders the page; echarts is the served copy of echarts, or
// nil to load it from EchartsCDN.
func newPageData(cfg Config, echarts *asset) (*pageData, error) {
	scriptSrc := "'self'"
	echartsURL, integrity := EchartsCDN, EchartsIntegrity
	if echarts != nil {
		echartsURL, integrity = echarts.url(), ""
	} else {
		scriptSrc += " " + echartsOrigin
	}
	pc := pageConfig{
		Title:      cfg.Title,
		PollMillis: cfg.PollInterval.Milliseconds(),
		Overview:   cfg.Overview,
		MaxPinned:  MaxPinned,
		Entities:   cfg.Entities != nil,
		Health:     cfg.Health != nil,
		Alerts:     cfg.Alerts != nil,
		Echarts:    echartsURL,
		ChartInit:  newChartInit(),
	}
	schema := cfg.Store.Schema()
	pc.Visitors = visitorsConfig{Name: cfg.VisitorsSeries, Precisions: schema.VisitorPrecisions()}
	last := min(windowBuckets, cfg.MaxBuckets)
	for _, p := range schema.Precisions {
		pc.Precisions = append(pc.Precisions, precisionView{Seconds: p, Label: humanSeconds(p), Last: last, Window: humanSeconds(p * last)})
	}
	// encoding/json escapes <, > and & inside strings, so no value can
	// close the script element that carries it.
	cfgJSON, err := json.Marshal(pc)
	if err != nil {
		return nil, fmt.Errorf("dashboard: page config: %w", err)
	}
	var buf bytes.Buffer
	err = pageTmpl.Execute(&buf, map[string]any{
		"Title":      cfg.Title,
		"Config":     template.JS(cfgJSON),
		"Precisions": pc.Precisions,
		"EchartsURL": echartsURL,
		// A constant: written as is, so the hash keeps its '+' and '/'.
		"Integrity": integrityAttr(integrity),
		"ScriptURL": assetURL(entryModule),
		"Modules":   moduleURLs(),
		"StyleURL":  assetURL("dashboard.css"),
		"IconURL":   assetURL("favicon.svg"),
		"Entities":  cfg.Entities != nil,
		"Alerts":    cfg.Alerts != nil,
	})
	if err != nil {
		return nil, fmt.Errorf("dashboard: page: %w", err)
	}
	csp := strings.Join([]string{
		"default-src 'none'",
		"script-src " + scriptSrc,
		"style-src 'self'",
		"img-src 'self' data:",
		"connect-src 'self'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
	return &pageData{html: buf.Bytes(), csp: csp}, nil
}

func integrityAttr(hash string) template.HTMLAttr {
	if hash == "" {
		return ""
	}
	return template.HTMLAttr(`integrity="` + hash + `"`)
}

// handlePage serves the page at the root: GET <root>/.
func (s *server) handlePage(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", s.page.csp)
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(s.page.html) // a failed write is the client gone
}
