package dashboard

import (
	"net/http"

	"github.com/pulse-dev/pulse/timeseries"
)

// visitorsBucket is one bucket of a visitors answer.
type visitorsBucket struct {
	Time     int64 `json:"time"`
	Visitors int64 `json:"visitors"`
}

// visitorsWindow is the whole window: its visitors, each counted once
// however many buckets saw them, and its hits, so that hits per visitor
// divides figures of the same buckets.
type visitorsWindow struct {
	Visitors int64 `json:"visitors"`
	Hits     int64 `json:"hits"`
}

type visitorsResponse struct {
	Name      string           `json:"name"`
	Precision int              `json:"precision"`
	From      int64            `json:"from"`
	To        int64            `json:"to"`
	Current   int64            `json:"current"`
	Buckets   []visitorsBucket `json:"buckets"`
	Window    visitorsWindow   `json:"window"`
}

// visitors answers one series' unique visitors at one precision,
// every bucket of the window and the window's union:
// GET api/visitors/{name}?precision=60[&from=&to=|&last=N].
func (s *server) visitors(r *http.Request) (visitorsResponse, error) {
	name, err := seriesName(r)
	if err != nil {
		return visitorsResponse{}, err
	}
	p, err := s.precisionParam(r)
	if err != nil {
		return visitorsResponse{}, err
	}
	// Before any read: a precision without visitors is the request's
	// mistake whether or not the series exists.
	if err := s.store.Schema.CheckVisitorPrecision(p); err != nil {
		return visitorsResponse{}, err
	}
	rng, current, err := s.window(r, p, windowBuckets)
	if err != nil {
		return visitorsResponse{}, err
	}
	if err := closeRange(&rng, p, current, int64(s.cfg.MaxBuckets), "of visitors"); err != nil {
		return visitorsResponse{}, err
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	release, err := s.reads.acquire(ctx)
	if err != nil {
		return visitorsResponse{}, err
	}
	defer release()
	samples, err := s.cfg.Store.SamplesMany(ctx, []string{name}, p, timeseries.Range{From: rng.From, To: rng.To})
	if err != nil {
		return visitorsResponse{}, err
	}
	hits, ok := samples[name]
	if !ok {
		return visitorsResponse{}, timeseries.ErrUnknownSeries
	}
	u, err := s.store.Visitors(ctx, name, p, rng.From, rng.To)
	if err != nil {
		return visitorsResponse{}, err
	}
	resp := visitorsResponse{Name: name, Precision: p, From: timeseries.BucketStart(rng.From, p), To: timeseries.BucketStart(rng.To, p),
		Current: current, Buckets: make([]visitorsBucket, 0, len(u.Buckets)), Window: visitorsWindow{Visitors: u.Window}}
	for _, b := range u.Buckets {
		resp.Buckets = append(resp.Buckets, visitorsBucket{Time: b.Start, Visitors: b.Count})
	}
	for _, smp := range hits {
		resp.Window.Hits += smp.Count
	}
	return resp, nil
}
