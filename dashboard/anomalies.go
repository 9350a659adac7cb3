package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"

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

// eventJSON is an event: its root's incident and its related ones.
type eventJSON struct {
	incidentJSON
	Related []incidentJSON `json:"related"`
}

func incidentOf(in forecast.Incident) incidentJSON {
	return incidentJSON{Series: in.Series, Precision: int(in.Precision.Seconds()), Kind: string(in.Kind), Direction: string(in.Direction),
		Start: in.Start.Unix(), End: in.End.Unix(), Open: in.Open, Buckets: in.Buckets, Peak: in.Peak.Bucket.Unix(),
		Observed: num(in.Peak.Observed), Expected: num(in.Peak.Expected), Score: num(in.Score)}
}

// anomalies scans every series at a precision (or the one named by
// series=) and lists the incidents of its last buckets as events (one per
// incident, related series under its root), newest first, and every
// flagged bucket; kind= keeps one kind.
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
	fits, err := s.sharedScan(ctx, p, current, name)
	if err != nil {
		return anomaliesResponse{}, err
	}
	from := current - last*int64(p)
	resp := anomaliesResponse{Precision: p, Last: last, Series: len(fits), Events: []eventJSON{}, Anomalies: []*flagJSON{}}
	var incs []forecast.Incident
	for _, fit := range fits {
		fd := fit.Fitted
		if fd == nil { // too little history to judge: no flags, not a failed scan
			continue
		}
		for i := range fd.Flags {
			if f := &fd.Flags[i]; f.Bucket.Unix() >= from && (kind == "" || f.Kind == kind) {
				resp.Anomalies = append(resp.Anomalies, flagOf(f))
			}
		}
		for _, in := range fd.Incidents {
			if in.End.Unix() >= from {
				incs = append(incs, in)
			}
		}
	}
	for _, ev := range fromstore.Group(incs) {
		if kind != "" && ev.Kind != kind {
			continue
		}
		e := eventJSON{incidentJSON: incidentOf(ev.Incident), Related: []incidentJSON{}}
		for _, r := range ev.Related {
			e.Related = append(e.Related, incidentOf(r))
		}
		resp.Events = append(resp.Events, e)
	}
	slices.SortFunc(resp.Anomalies, func(a, b *flagJSON) int {
		if c := cmp.Compare(b.Bucket, a.Bucket); c != 0 {
			return c
		}
		return cmp.Compare(a.Series, b.Series)
	})
	return resp, nil
}

// namesAt is the known series at precision p, or only name when given.
func (s *server) namesAt(ctx context.Context, p int, name string) ([]string, error) {
	if name != "" {
		return []string{name}, nil
	}
	return s.cfg.Store.NamesAt(ctx, p)
}
