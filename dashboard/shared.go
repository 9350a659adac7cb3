package dashboard

import (
	"context"
	"strconv"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/timeseries"
)

// windowSet is what one overview read found: the series kept at a
// precision and their samples over a window.
type windowSet struct {
	names   []string
	windows map[string][]timeseries.Sample
}

// sharedWindows lists the series kept at precision p and reads their
// samples over rng, or joins the identical read already under way: open
// dashboards poll the same view at once, and one read serves them all.
// The result is shared: callers must not change it.
//
// The read runs in the goroutine of the request that started it, so a
// panic in it answers 500 to every request sharing it (singleflight
// re-panics in each) rather than ending the process. Requests that join
// it wait for it: it ends within Timeout of its start, before their own
// deadlines.
func (s *server) sharedWindows(ctx context.Context, p int, rng timeseries.Range) ([]string, map[string][]timeseries.Sample, error) {
	key := strconv.Itoa(p) + ":" + strconv.FormatInt(rng.From, 10) + ":" + strconv.FormatInt(rng.To, 10)
	v, err, _ := s.windows.Do(key, func() (any, error) { return s.readWindows(ctx, p, rng) })
	if err != nil {
		return nil, nil, err
	}
	set := v.(*windowSet)
	return set.names, set.windows, nil
}

// readWindows is the read sharedWindows shares.
func (s *server) readWindows(ctx context.Context, p int, rng timeseries.Range) (*windowSet, error) {
	ctx, done, err := s.detachedRead(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	set := &windowSet{}
	if set.names, err = s.namesAt(ctx, p, ""); err != nil {
		return nil, err
	}
	if set.windows, err = s.cfg.Store.SamplesMany(ctx, set.names, p, rng); err != nil {
		return nil, err
	}
	return set, nil
}

// sharedScan fits every series at precision p (or only name) for its
// flags, or joins the identical scan already under way in the same
// bucket: open dashboards ask for the anomalies as a bucket closes, all
// at once, and one scan of every series serves them all. It runs, and
// is shared, as sharedWindows' read is; callers must not change it.
func (s *server) sharedScan(ctx context.Context, p int, current int64, name string) (map[string]fromstore.Result, error) {
	key := strconv.Itoa(p) + ":" + strconv.FormatInt(current, 10) + ":" + name
	v, err, _ := s.scans.Do(key, func() (any, error) {
		ctx, done, err := s.detachedRead(ctx)
		if err != nil {
			return nil, err
		}
		defer done()
		names, err := s.namesAt(ctx, p, name)
		if err != nil {
			return nil, err
		}
		return s.scanner.FitAll(ctx, names, p, forecast.Config{FlagsOnly: true})
	})
	if err != nil {
		return nil, err
	}
	return v.(map[string]fromstore.Result), nil
}

// detachedRead is the context and read slot of a read other requests
// share: the client that started it leaving must not cut it short, so it
// runs under the server's own bound. done ends it.
func (s *server) detachedRead(ctx context.Context) (context.Context, func(), error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
	release, err := s.acquireRead(ctx)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return ctx, func() { release(); cancel() }, nil
}
