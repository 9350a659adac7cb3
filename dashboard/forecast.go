package dashboard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/internal/seriesname"
	"github.com/pulse-dev/pulse/timeseries"
)

// maxHorizon bounds the buckets a forecast looks ahead: as many as a
// precision keeps.
const maxHorizon = fromstore.Window

// forecastKinds are what api/forecast forecasts: the series' hits, its
// share of 5xx answers, or a quantile of its durations.
var forecastKinds = map[string]float64{"hits": 0, "errors": 0, "p50": 0.5, "p90": 0.9, "p99": 0.99} // query words, not series names

// forecastPoint is one bucket of api/forecast; null where a value has no
// meaning (a future bucket's value, a warm-up bucket's band).
type forecastPoint struct {
	Time     int64     `json:"time"`
	Value    *float64  `json:"value,omitempty"`
	Expected *float64  `json:"expected"`
	Lo80     *float64  `json:"lo80"`
	Hi80     *float64  `json:"hi80"`
	Lo95     *float64  `json:"lo95"`
	Hi95     *float64  `json:"hi95"`
	Anomaly  *flagJSON `json:"anomaly"`
}

// flagJSON is a flag as the API gives it: times in unix seconds, like
// every other answer.
type flagJSON struct {
	Series    string   `json:"series"`
	Precision int      `json:"precision"`
	Bucket    int64    `json:"bucket"`
	Kind      string   `json:"kind"`
	Direction string   `json:"direction"`
	Observed  *float64 `json:"observed"`
	Expected  *float64 `json:"expected"`
	Lo95      *float64 `json:"lo95"`
	Hi95      *float64 `json:"hi95"`
	Score     *float64 `json:"score"`
}

func flagOf(f *forecast.Flag) *flagJSON {
	if f == nil {
		return nil
	}
	return &flagJSON{Series: f.Series, Precision: int(f.Precision.Seconds()), Bucket: f.Bucket.Unix(), Kind: string(f.Kind), Direction: string(f.Direction),
		Observed: num(f.Observed), Expected: num(f.Expected), Lo95: num(f.Band.Lo), Hi95: num(f.Band.Hi), Score: num(f.Score)}
}

type forecastResponse struct {
	Name      string          `json:"name"`
	Precision int             `json:"precision"`
	Kind      string          `json:"kind"`
	Model     forecast.Model  `json:"model"`
	History   []forecastPoint `json:"history"`
	Forecast  []forecastPoint `json:"forecast"`
}

// num is x, or nil for NaN and infinities, which JSON cannot carry.
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func pointOf(p forecast.Point, past bool) forecastPoint {
	out := forecastPoint{Time: p.Time.Unix(), Expected: num(p.Expected),
		Lo80: num(p.Band80.Lo), Hi80: num(p.Band80.Hi), Lo95: num(p.Band95.Lo), Hi95: num(p.Band95.Hi), Anomaly: flagOf(p.Anomaly)}
	if past {
		out.Value = num(p.Value)
	}
	return out
}

// forecast answers one series' history with its expectations and bands,
// and its next buckets: GET api/forecast/{name}?precision=P[&horizon=12]
// [&kind=hits|errors|p50|p90|p99].
func (s *server) forecast(r *http.Request) (forecastResponse, error) {
	name, err := seriesName(r)
	if err != nil {
		return forecastResponse{}, err
	}
	p, err := s.precisionParam(r)
	if err != nil {
		return forecastResponse{}, err
	}
	horizon, err := intParam(r, "horizon", 12, 1, maxHorizon)
	if err != nil {
		return forecastResponse{}, err
	}
	kind := r.URL.Query().Get("kind")
	if kind == "" {
		kind = "hits" // a query word, not a series name
	}
	if _, ok := forecastKinds[kind]; !ok {
		return forecastResponse{}, badRequest(fmt.Sprintf("kind %q: one of hits, errors, p50, p90, p99", kind))
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	release, err := s.reads.acquire(ctx)
	if err != nil {
		return forecastResponse{}, err
	}
	defer release()
	fd, err := fit(ctx, s.reads.scanner, name, p, kind)
	if err != nil {
		return forecastResponse{}, err
	}
	if kind == "hits" { // a query word, not a series name: only a count has kept scores
		if err := markIncidents(ctx, s.cfg.Store, fd, name, p); err != nil {
			return forecastResponse{}, err
		}
	}
	resp := forecastResponse{Name: name, Precision: p, Kind: kind, Model: fd.Model}
	for _, pt := range fd.History {
		resp.History = append(resp.History, pointOf(pt, true))
	}
	for _, pt := range fd.Forecast(int(horizon)) {
		resp.Forecast = append(resp.Forecast, pointOf(pt, false))
	}
	return resp, nil
}

// fit reads and fits one series as kind says, its hits through sc.
func fit(ctx context.Context, sc *fromstore.Scanner, name string, p int, kind string) (*forecast.Fitted, error) {
	st := sc.Store
	var fd *forecast.Fitted
	var err error
	switch kind {
	case "hits": // a query word, not a series name
		fd, err = keptFit(ctx, sc, name, p)
	case "errors":
		fd, err = fromstore.FitErrors(ctx, st, name, errorsOf(name), p, forecast.Config{})
	default:
		fd, err = fromstore.FitDurations(ctx, st, name, p, forecastKinds[kind], forecast.Config{})
	}
	switch {
	case errors.Is(err, timeseries.ErrUnknownSeries), errors.Is(err, timeseries.ErrNoDurations):
		return nil, err
	case errors.Is(err, fromstore.ErrNoData) || errors.Is(err, forecast.ErrTooShort):
		return nil, unprocessable(err.Error())
	}
	return fd, err
}

// keptFit fits the hits of name through the dashboard's Scanner, so
// that each settled bucket has the score kept in Redis: the one
// api/anomalies and the incident record give it.
func keptFit(ctx context.Context, sc *fromstore.Scanner, name string, p int) (*forecast.Fitted, error) {
	all, err := sc.FitAll(ctx, []string{name}, p, forecast.Config{})
	if err != nil {
		return nil, err
	}
	r, ok := all[name]
	if !ok {
		return nil, fmt.Errorf("dashboard: %q at precision %d: %w", name, p, timeseries.ErrUnknownSeries)
	}
	return r.Fitted, r.Err
}

// markIncidents makes the flags of fd's history those of the incidents
// kept: a bucket of a kept incident of name is marked (with its kept
// score), one outside none is not, so the chart marks what the list
// lists.
func markIncidents(ctx context.Context, store *timeseries.Store, fd *forecast.Fitted, name string, p int) error {
	if len(fd.History) == 0 {
		return nil
	}
	recs, err := fromstore.Incidents(ctx, store, p, fd.History[0].Time, fd.History[len(fd.History)-1].Time.Add(time.Duration(p)*time.Second))
	if err != nil {
		return err
	}
	for i := range fd.History {
		pt := &fd.History[i]
		b := pt.Time.Unix()
		at := slices.IndexFunc(recs, func(r fromstore.Record) bool { return r.Has(name) && b >= r.Start && b <= r.End })
		switch {
		case at < 0:
			pt.Anomaly = nil
		case pt.Anomaly == nil || pt.Anomaly.Direction != recs[at].Direction:
			r := recs[at]
			pt.Anomaly = &forecast.Flag{Series: name, Precision: time.Duration(p) * time.Second, Bucket: pt.Time, Kind: r.Kind,
				Direction: r.Direction, Observed: pt.Value, Expected: pt.Expected, Band: pt.Band95, Score: pt.Score}
		}
	}
	return nil
}

// errorsOf is the series that counts name's 5xx answers: a route's own
// class, or the app's.
func errorsOf(name string) string {
	if r, ok := timeseries.ParseRouteName(name); ok && r.Class == "" {
		return seriesname.WithClass(name, 500)
	}
	return seriesname.Status(500)
}

// unprocessable is a well-formed request the data cannot answer, such as
// a forecast of a series with too little history: 422 with its text.
type unprocessable string

func (e unprocessable) Error() string { return string(e) }
