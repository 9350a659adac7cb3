package dashboard

import (
	"fmt"
	"net/http"
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

type countersResponse struct {
	Counters []timeseries.SeriesInfo `json:"counters"`
}

// handleCounters lists every series: GET api/counters.
func (s *server) handleCounters(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.requestContext(r)
	defer cancel()
	infos, err := s.cfg.Store.Series(ctx)
	if err != nil {
		s.answerError(w, r, err)
		return
	}
	writeJSON(w, countersResponse{Counters: infos})
}

type samplesResponse struct {
	Name      string              `json:"name"`
	Precision int                 `json:"precision"`
	Samples   []timeseries.Sample `json:"samples"`
	// Current is the start of the still-open bucket: its count grows.
	Current int64 `json:"current"`
}

// samples answers one series at one precision:
// GET api/counters/{name}?precision=5[&from=&to=|&last=N][&fill=zero].
func (s *server) samples(r *http.Request) (samplesResponse, error) {
	name, err := seriesName(r)
	if err != nil {
		return samplesResponse{}, err
	}
	p, err := s.precisionParam(r)
	if err != nil {
		return samplesResponse{}, err
	}
	rng, current, err := s.window(r, p, 0)
	if err != nil {
		return samplesResponse{}, err
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	release, err := s.reads.acquire(ctx)
	if err != nil {
		return samplesResponse{}, err
	}
	defer release()
	samples, err := s.cfg.Store.Samples(ctx, name, p, rng)
	if err != nil {
		return samplesResponse{}, err
	}
	return samplesResponse{Name: name, Precision: p, Samples: samples, Current: current}, nil
}

// seriesTotal is one series in the overview's list of all series.
type seriesTotal struct {
	Name  string `json:"name"`
	Total int64  `json:"total"`
}

// seriesWindow is one charted series of the overview.
type seriesWindow struct {
	Name    string              `json:"name"`
	Total   int64               `json:"total"`
	Samples []timeseries.Sample `json:"samples"`
}

type overviewResponse struct {
	Precision int   `json:"precision"`
	From      int64 `json:"from"`
	To        int64 `json:"to"`
	// Current is the start of the still-open bucket; Now is the store's
	// clock, for "how long ago" against times it stamped.
	Current int64 `json:"current"`
	Now     int64 `json:"now"`
	// Top are the busiest series over the window, zero-filled.
	Top []seriesWindow `json:"top"`
	// Pinned are the series asked for by name that exist, zero-filled.
	Pinned []seriesWindow `json:"pinned"`
	// Totals lists every series at this precision, busiest first.
	Totals []seriesTotal `json:"totals"`
}

// overviewQuery is what an overview request asks for.
type overviewQuery struct {
	precision int
	rng       timeseries.Range
	current   int64
	n         int64
	pins      []string
}

// overviewParams reads and checks an overview request's parameters.
func (s *server) overviewParams(r *http.Request) (q overviewQuery, err error) {
	if q.precision, err = s.precisionParam(r); err != nil {
		return q, err
	}
	values := r.URL.Query()
	for _, k := range []string{"from", "to", "fill"} {
		if values.Get(k) != "" {
			return q, badRequest("the overview takes last=N, not " + k)
		}
	}
	if q.rng, q.current, err = s.window(r, q.precision, windowBuckets); err != nil {
		return q, err
	}
	if q.n, err = intParam(r, "n", int64(s.cfg.Overview), 0, MaxOverview); err != nil {
		return q, err
	}
	q.pins = values["series"]
	if len(q.pins) > MaxPinned {
		return q, badRequest(fmt.Sprintf("at most %d series may be named", MaxPinned))
	}
	for _, name := range q.pins {
		if err := checkName(name); err != nil {
			return q, err
		}
	}
	return q, nil
}

// handleOverview answers the busiest series over a window, in one batch
// read of every series: GET api/overview?precision=5[&last=N][&n=6]
// [&series=name…].
func (s *server) handleOverview(w http.ResponseWriter, r *http.Request) {
	q, err := s.overviewParams(r)
	if err != nil {
		s.answerError(w, r, err)
		return
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	set, err := s.reads.sharedWindows(ctx, q.precision, q.rng, q.pins)
	if err != nil {
		s.answerError(w, r, err)
		return
	}
	writeJSON(w, overview(q, set, s.store.Now()))
}

// overview charts the busiest series of the window read and the pinned
// ones.
func overview(q overviewQuery, set *windowSet, now time.Time) overviewResponse {
	resp := overviewResponse{Precision: q.precision, From: q.rng.From, To: q.rng.To, Current: q.current, Now: now.Unix(),
		Top: []seriesWindow{}, Pinned: []seriesWindow{}, Totals: set.ranked}
	for _, t := range set.ranked {
		if int64(len(resp.Top)) >= q.n || t.Total == 0 {
			break
		}
		if set.charted(t.Name) {
			resp.Top = append(resp.Top, seriesWindow{Name: t.Name, Total: t.Total, Samples: set.charts[t.Name]})
		}
	}
	seen := map[string]bool{}
	for _, name := range q.pins {
		if total, ok := set.total(name); ok && !seen[name] {
			seen[name] = true
			resp.Pinned = append(resp.Pinned, seriesWindow{Name: name, Total: total, Samples: set.charts[name]})
		}
	}
	return resp
}
