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
	Anomalies []*flagJSON `json:"anomalies"`
}

// anomalies scans every series at a precision (or the one named by
// series=) and lists the flags of its last buckets, newest first; kind=
// keeps one kind of flag.
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
	resp := anomaliesResponse{Precision: p, Last: last, Series: len(fits), Anomalies: []*flagJSON{}}
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
