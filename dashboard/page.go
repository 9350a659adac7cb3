package dashboard

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/pulse-dev/pulse/internal/series"
)

//go:embed page.html
var pageTemplate string

var pageTmpl = template.Must(template.New("page").Parse(pageTemplate))

// Chart colours: one hue per meaning, readable on white.
const (
	colorLine    = "#2563eb"
	colorArea    = "rgba(37, 99, 235, 0.10)"
	colorPartial = "#f59e0b"
	colorAxis    = "#64748b"
	colorGrid    = "#e2e8f0"
)

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
	// Echarts is where the page loads echarts from, for the notice shown
	// when it fails to load.
	Echarts string `json:"echarts"`
	// Chart is the option every chart starts from, built with go-echarts.
	Chart map[string]any `json:"chart"`
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

// chartOption builds the line chart every series is drawn with: complete
// buckets as a solid line over a light area, the still-open bucket as a
// dashed segment ending in a hollow dot. The page fills in the data.
func chartOption() map[string]any {
	line := charts.NewLine()
	line.SetGlobalOptions(
		charts.WithInitializationOpts(opts.Initialization{Renderer: "canvas"}),
		charts.WithAnimation(false),
		charts.WithColorsOpts(opts.Colors{colorLine, colorPartial}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithTooltipOpts(opts.Tooltip{
			Show:        opts.Bool(true),
			Trigger:     "axis",
			AxisPointer: &opts.AxisPointer{Type: "line", Snap: opts.Bool(true)},
		}),
		charts.WithGridOpts(opts.Grid{Left: "6", Right: "18", Top: "14", Bottom: "4", ContainLabel: opts.Bool(true)}),
		charts.WithXAxisOpts(opts.XAxis{
			Type:     "time",
			AxisLine: &opts.AxisLine{LineStyle: &opts.LineStyle{Color: colorGrid}},
			AxisTick: &opts.AxisTick{Show: opts.Bool(false)},
			// The ends of the window fall between round times: label only
			// the round ones, so no label crowds its neighbour.
			AxisLabel: &opts.AxisLabel{Color: colorAxis, HideOverlap: opts.Bool(true), FontSize: 11,
				ShowMinLabel: opts.Bool(false), ShowMaxLabel: opts.Bool(false)},
			SplitLine: &opts.SplitLine{Show: opts.Bool(false)},
		}),
		charts.WithYAxisOpts(opts.YAxis{
			Type:        "value",
			Min:         0,
			MinInterval: 1,
			SplitNumber: 4,
			AxisLabel:   &opts.AxisLabel{Color: colorAxis, FontSize: 11, ShowMinLabel: opts.Bool(true), ShowMaxLabel: opts.Bool(true)},
			SplitLine:   &opts.SplitLine{Show: opts.Bool(true), LineStyle: &opts.LineStyle{Color: colorGrid}},
		}),
	)
	line.AddSeries("complete buckets", nil,
		charts.WithSeriesId("complete"),
		charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false), Symbol: "circle"}),
		charts.WithLineStyleOpts(opts.LineStyle{Color: colorLine, Width: 2}),
		charts.WithAreaStyleOpts(opts.AreaStyle{Color: colorArea}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorLine}),
	)
	line.AddSeries("current bucket (still filling)", nil,
		charts.WithSeriesId("partial"),
		charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(true), Symbol: "emptyCircle", SymbolSize: 7}),
		charts.WithLineStyleOpts(opts.LineStyle{Color: colorPartial, Width: 2, Type: "dashed"}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorPartial}),
	)
	line.Validate()
	return line.JSON()
}

// newPageData renders the page; echarts is the served copy of echarts, or
// nil to load it from EchartsCDN.
func newPageData(cfg Config, echarts *asset) (*pageData, error) {
	option := chartOption()
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
		Chart:      option,
		Echarts:    echartsURL,
	}
	last := min(windowBuckets, cfg.MaxBuckets)
	for _, p := range series.HandleOf(cfg.Store).Schema.Precisions {
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
		"ScriptURL": assetURL("dashboard.js"),
		"StyleURL":  assetURL("dashboard.css"),
		"IconURL":   assetURL("favicon.svg"),
		"Entities":  cfg.Entities != nil,
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
