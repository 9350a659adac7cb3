package alert

import (
	"context"
	"time"
)

// catalog is what an evaluation reads by besides the rules: the route
// series of EveryRoute rules, and since when the recorders count the
// requests slower than each threshold (timeseries.Store.SlowSince). Both
// change seldom, so they are read again every Config.RouteRefresh.
type catalog struct {
	routes    []string
	slowSince map[string]time.Time
	at        time.Time
}

// observe reads what the rules need, in one pipeline of counts per
// precision and, for Latency rules whose threshold the recorders do not
// count, one DurationsMany per precision, and observes each rule.
func (e *Evaluator) observe(ctx context.Context, now time.Time) ([]observation, error) {
	cat, err := e.catalog(ctx, now)
	if err != nil {
		return nil, err
	}
	rp, dp := readPlan{}, durationPlan{}
	in := planInput{now: now, routes: cat.routes, slowSince: cat.slowSince, precisions: e.schema.Precisions, maxBuckets: e.cfg.MaxBuckets}
	observers := append(plan(e.rules, in, rp, e.cfg.Detector), planLatencies(e.rules, in, rp, dp)...)
	// The durations go in pipelines of their own, one per precision,
	// read beside the counts' so that they add no wait.
	var derr error
	durs := make(chan struct{})
	go func() { defer close(durs); derr = dp.read(ctx, e.durations, now.Unix()) }()
	d, err := rp.read(ctx, e.st.r, e.schema, now.Unix(), &e.cache, e.settle)
	<-durs
	if err == nil {
		err = derr
	}
	if err != nil {
		return nil, err
	}
	var obs []observation
	for _, f := range observers {
		obs = append(obs, f(ctx, d)...)
	}
	return obs, nil
}

// catalog is the evaluation's catalog, read again once RouteRefresh has
// passed; what no rule needs is not read.
func (e *Evaluator) catalog(ctx context.Context, now time.Time) (*catalog, error) {
	e.mu.Lock()
	cat := e.mem.catalog
	e.mu.Unlock()
	if cat != nil && now.Sub(cat.at) < e.cfg.RouteRefresh {
		return cat, nil
	}
	needRoutes, needSlow := false, false
	for _, r := range e.rules {
		needRoutes = needRoutes || r.Series == EveryRoute
		needSlow = needSlow || r.Kind == Latency
	}
	cat = &catalog{routes: []string{}, at: now}
	if needRoutes {
		infos, err := e.store.Series(ctx)
		if err != nil {
			return nil, err
		}
		if routes := routesOf(infos); routes != nil {
			cat.routes = routes
		}
	}
	if needSlow {
		var err error
		if cat.slowSince, err = e.store.SlowSince(ctx); err != nil {
			return nil, err
		}
	}
	e.mu.Lock()
	e.mem.catalog = cat
	e.mu.Unlock()
	return cat, nil
}
