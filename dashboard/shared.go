package dashboard

import (
	"context"
	"slices"
	"sync"

	"github.com/pulse-dev/pulse/timeseries"
)

// windowKey names one overview read: every series at one precision over
// one window.
type windowKey struct {
	precision int
	from, to  int64
}

// windowRead is one overview read under way, shared by every request for
// the same window that arrives while it runs: open dashboards poll the
// same view at once, and one read serves them all.
type windowRead struct {
	done    chan struct{}
	names   []string
	windows map[string][]timeseries.Sample
	err     error
}

// sharedWindows lists the series kept at precision p and reads their
// samples over r, or waits for the identical read already under way. The
// result is shared: callers must not change it.
func (s *server) sharedWindows(ctx context.Context, p int, r timeseries.Range) ([]string, map[string][]timeseries.Sample, error) {
	key := windowKey{p, r.From, r.To}
	s.windowsMu.Lock()
	if w, ok := s.windowReads[key]; ok {
		s.windowsMu.Unlock()
		select {
		case <-w.done:
			return w.names, w.windows, w.err
		case <-ctx.Done():
			return nil, nil, errBusy
		}
	}
	w := &windowRead{done: make(chan struct{})}
	s.windowReads[key] = w
	s.windowsMu.Unlock()
	defer func() {
		s.windowsMu.Lock()
		delete(s.windowReads, key)
		s.windowsMu.Unlock()
		close(w.done)
	}()

	// The read serves other requests too: one client leaving must not
	// cut it short, so it runs under the server's own bound.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
	defer cancel()
	release, err := s.acquireRead(ctx)
	if err != nil {
		w.err = err
		return nil, nil, err
	}
	defer release()
	infos, err := s.cfg.Store.Series(ctx)
	if err != nil {
		w.err = err
		return nil, nil, err
	}
	for _, info := range infos {
		if slices.Contains(info.Precisions, p) {
			w.names = append(w.names, info.Name)
		}
	}
	w.windows, w.err = s.cfg.Store.SamplesMany(ctx, w.names, p, r)
	return w.names, w.windows, w.err
}

// windowReadsState is the server's table of overview reads under way.
type windowReadsState struct {
	windowsMu   sync.Mutex
	windowReads map[windowKey]*windowRead
}
