package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/timeseries"
)

// Bounds of api/incidents.
const (
	incidentsDefaultSince = 30 * 24 * time.Hour // how far back unless told: the record's retention
	incidentsDefaultLimit = 100
	incidentsMaxLimit     = 1000
)

// incidentRecordJSON is a kept incident as api/incidents gives it.
type incidentRecordJSON struct {
	eventJSON
	App string `json:"app"`
	// InWindow says its end is still among the buckets its precision
	// keeps, so its chart can show it.
	InWindow bool `json:"in_window"`
}

type incidentsResponse struct {
	Since     int64                `json:"since"`
	Until     int64                `json:"until"`
	Total     int                  `json:"total"` // matching, over every page
	Offset    int64                `json:"offset"`
	Next      *int64               `json:"next"` // the offset of the next page; null on the last
	Incidents []incidentRecordJSON `json:"incidents"`
}

// incidentsQuery is api/incidents' parameters, checked.
type incidentsQuery struct {
	precisions    []int
	since, until  int64
	series        string
	kind          forecast.AnomalyKind
	limit, offset int64
}

// incidents lists the incidents kept (fromstore.Record) that end within
// [since, until] (unix seconds; the last within seconds, 30 days unless
// told), newest end first: GET api/incidents[?precision=P][&since=S|&within=W][&until=U]
// [&series=NAME][&kind=K][&limit=100][&offset=0]. Without precision every
// precision is read. A series neither kept nor in any incident is 404.
func (s *server) incidents(r *http.Request) (incidentsResponse, error) {
	q, err := incidentsParams(r, s.store)
	if err != nil {
		return incidentsResponse{}, err
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	release, err := s.reads.acquire(ctx)
	if err != nil {
		return incidentsResponse{}, err
	}
	defer release()
	now := s.store.Now().Unix()
	var all []incidentRecordJSON
	for _, p := range q.precisions {
		recs, err := fromstore.Incidents(ctx, s.cfg.Store, p, time.Unix(q.since, 0), time.Unix(q.until, 0))
		if err != nil {
			return incidentsResponse{}, err
		}
		window := timeseries.BucketStart(now, p) - int64(fromstore.Window)*int64(p)
		for _, rec := range recs {
			if (q.kind == "" || rec.Kind == q.kind) && (q.series == "" || rec.Has(q.series)) {
				all = append(all, incidentRecordJSON{eventJSON: eventOf(rec), App: rec.App, InWindow: rec.End >= window})
			}
		}
	}
	if q.series != "" && len(all) == 0 {
		if err := checkKnown(ctx, s.cfg.Store, q.series, q.precisions); err != nil {
			return incidentsResponse{}, err
		}
	}
	slices.SortStableFunc(all, func(a, b incidentRecordJSON) int { return cmp.Compare(b.End, a.End) })
	resp := incidentsResponse{Since: q.since, Until: q.until, Total: len(all), Offset: q.offset, Incidents: []incidentRecordJSON{}}
	if q.offset < int64(len(all)) {
		end := min(int64(len(all)), q.offset+q.limit)
		resp.Incidents = all[q.offset:end]
		if end < int64(len(all)) {
			resp.Next = &end
		}
	}
	return resp, nil
}

// incidentsParams reads and checks api/incidents' parameters: 400 for
// any that is malformed or out of range.
func incidentsParams(r *http.Request, store storeView) (incidentsQuery, error) {
	v := r.URL.Query()
	q := incidentsQuery{precisions: store.Schema.Precisions, series: v.Get("series"), kind: forecast.AnomalyKind(v.Get("kind"))}
	if v.Has("precision") { // "precision=" is as bad here as anywhere
		p, err := precisionOf(r, store.Schema)
		if err != nil {
			return q, err
		}
		q.precisions = []int{p}
	}
	now := store.Now().Unix()
	// within counts back from the store's clock, so that a browser whose
	// clock is off still asks for the last day.
	within, err := intParam(r, "within", int64(incidentsDefaultSince/time.Second), 1, 1<<40)
	if err != nil {
		return q, err
	}
	if v.Has("since") && v.Has("within") {
		return q, badRequest("give since or within, not both")
	}
	if q.since, err = unixParam(r, "since", now-within); err != nil {
		return q, err
	}
	if q.until, err = unixParam(r, "until", now); err != nil {
		return q, err
	}
	if q.since > q.until {
		return q, badRequest(fmt.Sprintf("since %d is after until %d", q.since, q.until))
	}
	if q.series != "" {
		if err := checkName(q.series); err != nil {
			return q, err
		}
	}
	switch q.kind {
	case "", forecast.Spike, forecast.Drop, forecast.LevelShift:
	default:
		return q, badRequest(fmt.Sprintf("kind %q: one of %s, %s, %s", q.kind, forecast.Spike, forecast.Drop, forecast.LevelShift))
	}
	if q.limit, err = intParam(r, "limit", incidentsDefaultLimit, 1, incidentsMaxLimit); err != nil {
		return q, err
	}
	if q.offset, err = intParam(r, "offset", 0, 0, 1<<31); err != nil {
		return q, err
	}
	return q, nil
}

// unixParam is the unix-seconds parameter name, or def when absent.
func unixParam(r *http.Request, name string, def int64) (int64, error) {
	return intParam(r, name, def, 0, 1<<40)
}

// checkKnown is nil when the store keeps series at one of precisions,
// else a 404 error.
func checkKnown(ctx context.Context, store *timeseries.Store, series string, precisions []int) error {
	for _, p := range precisions {
		names, err := store.NamesAt(ctx, p)
		if err != nil {
			return err
		}
		if slices.Contains(names, series) {
			return nil
		}
	}
	return fmt.Errorf("dashboard: %q: %w", series, timeseries.ErrUnknownSeries)
}
