package dashboard

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/pulse-dev/pulse/internal/seriesname"
	"github.com/pulse-dev/pulse/timeseries"
)

// Bounds of api/routes' n.
const (
	DefaultRoutes = 100
	MaxRoutes     = 1000
)

// isRouteName reports whether name is a route's own series.
func isRouteName(name string) bool {
	_, _, ok := seriesname.SplitRoute(name)
	return ok || name == seriesname.Unmatched
}

// isClassOf reports whether name is the status class series of a route
// series among listed ("GET /posts/:id status:5xx"), not a route.
func isClassOf(name string, listed func(string) bool) bool {
	route, _, ok := seriesname.CutClass(name)
	return ok && listed(route) && isRouteName(route)
}

// isSlowOf reports whether name counts the slow requests of a series
// among listed ("slow:250ms GET /posts/:id").
func isSlowOf(name string, listed func(string) bool) bool {
	series, _, ok := timeseries.ParseSlowSeries(name)
	return ok && listed(series)
}

// routeRow is one route of the RED table; durations in milliseconds.
type routeRow struct {
	Name      string `json:"name"`
	Hits      int64  `json:"hits"`
	Errors4xx int64  `json:"errors_4xx"`
	Errors5xx int64  `json:"errors_5xx"`
	// Timed is how many of the hits kept a duration: the quantiles are
	// zeros when none did.
	Timed int64   `json:"timed"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

type routesResponse struct {
	Precision int        `json:"precision"`
	From      int64      `json:"from"`
	To        int64      `json:"to"`
	Current   int64      `json:"current"`
	Routes    []routeRow `json:"routes"`
}

// routesQuery is what a routes request asks for.
type routesQuery struct {
	precision int
	rng       timeseries.Range
	current   int64
	sort      string
	n         int64
}

func (s *server) routesParams(r *http.Request) (q routesQuery, err error) {
	if q.precision, err = s.precisionParam(r); err != nil {
		return q, err
	}
	values := r.URL.Query()
	for _, k := range []string{"from", "to", "fill"} {
		if values.Get(k) != "" {
			return q, badRequest("the routes take last=N, not " + k)
		}
	}
	if q.rng, q.current, err = s.window(r, q.precision, windowBuckets); err != nil {
		return q, err
	}
	if q.n, err = intParam(r, "n", DefaultRoutes, 1, MaxRoutes); err != nil {
		return q, err
	}
	switch q.sort = cmp.Or(values.Get("sort"), "hits"); q.sort { // query words, not series names
	case "hits", "errors", "p99": // query words, not series names
	default:
		return q, badRequest("sort " + q.sort + ": sort by hits, errors or p99")
	}
	return q, nil
}

// handleRoutes answers the RED table of the window: per route series its
// hits, 4xx and 5xx answers and duration quantiles:
// GET api/routes?precision=5[&last=N][&sort=hits|errors|p99][&n=100].
func (s *server) handleRoutes(w http.ResponseWriter, r *http.Request) {
	q, err := s.routesParams(r)
	if err != nil {
		s.answerError(w, r, err)
		return
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	set, err := s.reads.sharedWindows(ctx, q.precision, q.rng, nil)
	if err != nil {
		s.answerError(w, r, err)
		return
	}
	rows := routeCounts(set)
	if q.sort != "p99" {
		sortRoutes(rows, q.sort)
		rows = rows[:min(int64(len(rows)), q.n)]
	}
	if err := s.routeDurations(ctx, q, rows); err != nil {
		s.answerError(w, r, err)
		return
	}
	sortRoutes(rows, q.sort)
	rows = rows[:min(int64(len(rows)), q.n)]
	writeJSON(w, routesResponse{Precision: q.precision, From: q.rng.From, To: q.rng.To, Current: q.current, Routes: rows})
}

// routeCounts finds the route series among names and adds up their hits
// and those of their 4xx and 5xx class series over the window.
func routeCounts(set *windowSet) []routeRow {
	totals := make(map[string]int64, len(set.names))
	for i, name := range set.names {
		totals[name] = set.sums[i]
	}
	listed := func(name string) bool { _, ok := totals[name]; return ok }
	rows := []routeRow{}
	for _, name := range set.names {
		if !isRouteName(name) || isClassOf(name, listed) {
			continue
		}
		rows = append(rows, routeRow{Name: name, Hits: totals[name],
			Errors4xx: totals[seriesname.WithClass(name, 400)], Errors5xx: totals[seriesname.WithClass(name, 500)]})
	}
	return rows
}

// sortRoutes orders rows by key, largest first, then by name.
func sortRoutes(rows []routeRow, key string) {
	slices.SortStableFunc(rows, func(a, b routeRow) int {
		var c int
		switch key {
		case "p99":
			c = cmp.Compare(b.P99, a.P99)
		case "errors":
			c = cmp.Compare(b.Errors4xx+b.Errors5xx, a.Errors4xx+a.Errors5xx)
		}
		return cmp.Or(c, cmp.Compare(b.Hits, a.Hits), strings.Compare(a.Name, b.Name))
	})
}

// routeDurations reads the durations of every row over the window, one
// read per route (a pipeline of its buckets), as many at once as
// ConcurrentReads allows. A route that keeps no durations keeps zeros.
func (s *server) routeDurations(ctx context.Context, q routesQuery, rows []routeRow) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, cap(s.reads.slots)))
	for i := range rows {
		g.Go(func() error {
			release, err := s.reads.acquire(ctx)
			if err != nil {
				return err
			}
			defer release()
			d, err := s.store.Durations(ctx, rows[i].Name, q.precision, q.rng.From, q.rng.To)
			if errors.Is(err, timeseries.ErrNoDurations) {
				return nil
			}
			if err != nil {
				return err
			}
			st := statsOf(d.Window, newQuantiles(defaultQuantiles))
			rows[i].Timed, rows[i].Mean, rows[i].Max = int64(st.count), st.mean, st.max
			rows[i].P50, rows[i].P90, rows[i].P99 = st.values[0], st.values[1], st.values[2]
			return nil
		})
	}
	return g.Wait()
}
