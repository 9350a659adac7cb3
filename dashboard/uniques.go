package dashboard

import (
	"net/http"

	"github.com/pulse-dev/pulse/timeseries"
)

// uniquesBucket is one bucket of a uniques answer.
type uniquesBucket struct {
	Time    int64 `json:"time"`
	Uniques int64 `json:"uniques"`
}

// uniquesWindow is the whole window: its visitors, each counted once
// however many buckets saw them, and its hits, so that hits per visitor
// divides figures of the same buckets.
type uniquesWindow struct {
	Uniques int64 `json:"uniques"`
	Hits    int64 `json:"hits"`
}

type uniquesResponse struct {
	Name      string          `json:"name"`
	Precision int             `json:"precision"`
	From      int64           `json:"from"`
	To        int64           `json:"to"`
	Current   int64           `json:"current"`
	Buckets   []uniquesBucket `json:"buckets"`
	Window    uniquesWindow   `json:"window"`
}

// handleUniques answers one series' unique visitors at one precision,
// every bucket of the window and the window's union:
// GET api/uniques/{name}?precision=60[&from=&to=|&last=N].
func (s *server) handleUniques(w http.ResponseWriter, r *http.Request) {
	resp, err := s.uniques(r)
	if err != nil {
		s.answerError(w, r, err)
		return
	}
	writeJSON(w, resp)
}

func (s *server) uniques(r *http.Request) (uniquesResponse, error) {
	name, err := seriesName(r)
	if err != nil {
		return uniquesResponse{}, err
	}
	p, err := s.precisionParam(r)
	if err != nil {
		return uniquesResponse{}, err
	}
	// Before any read: a precision without visitors is the request's
	// mistake whether or not the series exists.
	if err := s.store.Schema.CheckVisitorPrecision(p); err != nil {
		return uniquesResponse{}, err
	}
	rng, current, err := s.window(r, p, windowBuckets)
	if err != nil {
		return uniquesResponse{}, err
	}
	if err := closeRange(&rng, p, current, int64(s.cfg.MaxBuckets), "of visitors"); err != nil {
		return uniquesResponse{}, err
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	release, err := s.acquireRead(ctx)
	if err != nil {
		return uniquesResponse{}, err
	}
	defer release()
	samples, err := s.cfg.Store.SamplesMany(ctx, []string{name}, p, timeseries.Range{From: rng.From, To: rng.To})
	if err != nil {
		return uniquesResponse{}, err
	}
	hits, ok := samples[name]
	if !ok {
		return uniquesResponse{}, timeseries.ErrUnknownSeries
	}
	u, err := s.store.Visitors(ctx, name, p, rng.From, rng.To)
	if err != nil {
		return uniquesResponse{}, err
	}
	resp := uniquesResponse{Name: name, Precision: p, From: timeseries.BucketStart(rng.From, p), To: timeseries.BucketStart(rng.To, p),
		Current: current, Buckets: make([]uniquesBucket, 0, len(u.Buckets)), Window: uniquesWindow{Uniques: u.Window}}
	for _, b := range u.Buckets {
		resp.Buckets = append(resp.Buckets, uniquesBucket{Time: b.Start, Uniques: b.Count})
	}
	for _, smp := range hits {
		resp.Window.Hits += smp.Count
	}
	return resp, nil
}
