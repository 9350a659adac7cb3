package fromstore

import (
	"context"

	"github.com/pulse-dev/pulse/forecast"
)

// weeks is the Week of each series of got at 1 h, folded with its closed
// buckets: read once from Redis with Keep and written back when an hour
// closes, kept in the Scanner alone without it. A Week is never changed
// in place, since a fit of an earlier scan may still read it.
func (sc *Scanner) weeks(ctx context.Context, got map[string]forecast.Series) map[string]*forecast.Week {
	sc.mu.Lock()
	if sc.weekOf == nil {
		sc.weekOf = make(map[string]*forecast.Week)
	}
	next := make(map[string]*forecast.Week, len(got))
	var unread []string
	for name := range got {
		if w, ok := sc.weekOf[name]; ok {
			c := *w
			next[name] = &c
		} else {
			unread = append(unread, name)
		}
	}
	sc.mu.Unlock()
	if len(unread) > 0 && sc.Keep {
		loaded, err := Weeks{Store: sc.Store}.Load(ctx, unread)
		sc.report(err)
		for name, w := range loaded {
			next[name] = w
		}
	}
	hourly := make(map[string]*forecast.Series, len(got))
	for name, s := range got {
		hourly[name] = &s
	}
	if sc.Keep {
		_, err := Weeks{Store: sc.Store}.Update(ctx, next, hourly)
		sc.report(err)
	} else {
		for name, s := range hourly {
			if next[name] == nil {
				next[name] = new(forecast.Week)
			}
			next[name].Fold(*s) //nolint:errcheck // a 1 h series always folds
		}
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for name, w := range next {
		sc.weekOf[name] = w
	}
	return next
}
