package dashboard

import (
	"context"
	"slices"
	"strconv"

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
	// The read serves other requests too: the client that started it
	// leaving must not cut it short, so it runs under the server's own
	// bound.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
	defer cancel()
	release, err := s.acquireRead(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	infos, err := s.cfg.Store.Series(ctx)
	if err != nil {
		return nil, err
	}
	set := &windowSet{}
	for _, info := range infos {
		if slices.Contains(info.Precisions, p) {
			set.names = append(set.names, info.Name)
		}
	}
	if set.windows, err = s.cfg.Store.SamplesMany(ctx, set.names, p, rng); err != nil {
		return nil, err
	}
	return set, nil
}
