package dashboard

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/timeseries"
)

// anomaliesDefaultLast is how many buckets back api/anomalies looks
// unless told.
const anomaliesDefaultLast = 12

type anomaliesResponse struct {
	Precision int         `json:"precision"`
	Last      int64       `json:"last"`
	Series    int         `json:"series"` // how many were scanned
	Events    []eventJSON `json:"events"` // one per incident, under its root
	Anomalies []*flagJSON `json:"anomalies"`
}

// incidentJSON is an incident as the API gives it.
type incidentJSON struct {
	Series    string   `json:"series"`
	Precision int      `json:"precision"`
	Kind      string   `json:"kind"`
	Direction string   `json:"direction"`
	Start     int64    `json:"start"`
	End       int64    `json:"end"`
	Open      bool     `json:"open"`
	Buckets   int      `json:"buckets"`
	Peak      int64    `json:"peak"` // the bucket furthest out
	Observed  *float64 `json:"observed"`
	Expected  *float64 `json:"expected"`
	Score     *float64 `json:"score"`
}

// eventJSON is an event: its root's incident and the related series
// that broke with it, over the same span.
type eventJSON struct {
	incidentJSON
	Related []relatedJSON `json:"related"`
}

// relatedJSON is a related series of an event.
type relatedJSON struct {
	Series    string `json:"series"`
	Direction string `json:"direction"`
}

// eventOf is a kept incident as the API gives it: its root's incident,
// and its related series over the same span.
func eventOf(rec fromstore.Record) eventJSON {
	in := incidentJSON{Series: rec.Series, Precision: rec.Precision, Kind: string(rec.Kind), Direction: string(rec.Direction),
		Start: rec.Start, End: rec.End, Open: rec.Open, Buckets: int((rec.End-rec.Start)/int64(max(rec.Precision, 1))) + 1,
		Peak: rec.Peak.Bucket, Observed: num(rec.Peak.Observed), Expected: num(rec.Peak.Expected), Score: num(rec.Peak.Score)}
	e := eventJSON{incidentJSON: in, Related: make([]relatedJSON, len(rec.Related))}
	for i, r := range rec.Related {
		e.Related[i] = relatedJSON{Series: r, Direction: in.Direction}
	}
	return e
}

// anomalies scans every series at a precision (or the one named by
// series=, 404 when the store does not keep it there) and lists the
// incidents kept (fromstore.Record) that reach its last buckets as events
// (one per incident, related series under its root), newest end first,
// and every flagged bucket within one, with its kept score; kind= keeps
// one kind. The scan records what it finds before the list is read, so
// every instance, and every refresh, lists the same incidents.
func (s *server) anomalies(r *http.Request) (anomaliesResponse, error) {
	p, err := s.precisionParam(r)
	if err != nil {
		return anomaliesResponse{}, err
	}
	last, err := intParam(r, "last", anomaliesDefaultLast, 1, fromstore.Window)
	if err != nil {
		return anomaliesResponse{}, err
	}
	q := r.URL.Query()
	kind := forecast.AnomalyKind(q.Get("kind"))
	switch kind {
	case "", forecast.Spike, forecast.Drop, forecast.LevelShift:
	default:
		return anomaliesResponse{}, badRequest(fmt.Sprintf("kind %q: one of %s, %s, %s (the counts' flags)", kind, forecast.Spike, forecast.Drop, forecast.LevelShift))
	}
	name := q.Get("series")
	if name != "" {
		if err := checkName(name); err != nil {
			return anomaliesResponse{}, err
		}
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	current := timeseries.BucketStart(s.store.Now().Unix(), p)
	fits, err := s.reads.sharedScan(ctx, p, current, name)
	if err != nil {
		return anomaliesResponse{}, err
	}
	if _, ok := fits[name]; name != "" && !ok {
		return anomaliesResponse{}, fmt.Errorf("dashboard: %q at precision %d: %w", name, p, timeseries.ErrUnknownSeries)
	}
	from := current - last*int64(p)
	recs, err := fromstore.Incidents(ctx, s.cfg.Store, p, time.Unix(from, 0), time.Unix(current, 0))
	if err != nil {
		return anomaliesResponse{}, err
	}
	resp := anomaliesResponse{Precision: p, Last: last, Series: len(fits), Events: []eventJSON{}, Anomalies: []*flagJSON{}}
	var kept []fromstore.Record
	for _, rec := range recs {
		if (kind == "" || rec.Kind == kind) && (name == "" || rec.Has(name)) {
			resp.Events = append(resp.Events, eventOf(rec))
			kept = append(kept, rec)
		}
	}
	for _, fit := range fits {
		fd := fit.Fitted
		if fd == nil { // too little history to judge: no flags, not a failed scan
			continue
		}
		for i := range fd.Flags {
			if f := &fd.Flags[i]; f.Bucket.Unix() >= from && inRecord(kept, f) {
				resp.Anomalies = append(resp.Anomalies, flagOf(f))
			}
		}
	}
	slices.SortFunc(resp.Anomalies, func(a, b *flagJSON) int {
		if c := cmp.Compare(b.Bucket, a.Bucket); c != 0 {
			return c
		}
		return cmp.Compare(a.Series, b.Series)
	})
	return resp, nil
}

// inRecord reports whether flag f is a bucket of one of recs: the
// flags of a fit outside the incidents kept (a return to normal, a
// break under the band) are not anomalies.
func inRecord(recs []fromstore.Record, f *forecast.Flag) bool {
	b := f.Bucket.Unix()
	return slices.ContainsFunc(recs, func(r fromstore.Record) bool {
		return r.Has(f.Series) && r.Direction == f.Direction && b >= r.Start && b <= r.End
	})
}
