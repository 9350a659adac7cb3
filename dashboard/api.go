package dashboard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/entity"
	"github.com/pulse-dev/pulse/timeseries"
)

// badRequest is a client mistake, answered 400 with its text.
type badRequest string

func (e badRequest) Error() string { return string(e) }

// answerError maps an error of a read to a status: client mistakes are 4xx
// with their text; a backend failure is 503 with a generic text, its
// details going to the log only.
func (s *server) answerError(c echo.Context, err error) error {
	var bad badRequest
	var perr *timeseries.PrecisionError
	switch {
	case errors.As(err, &bad):
		return jsonError(c, http.StatusBadRequest, bad.Error())
	case errors.As(err, &perr):
		return jsonError(c, http.StatusBadRequest, fmt.Sprintf("precision %d is not kept; use one of %v", perr.Precision, perr.Valid))
	case errors.Is(err, timeseries.ErrRangeTooLarge):
		return jsonError(c, http.StatusBadRequest, "range too large: ask for at most "+strconv.Itoa(s.cfg.MaxBuckets)+" buckets, or do not zero-fill")
	case errors.Is(err, errBusy):
		return jsonError(c, http.StatusServiceUnavailable, "too many reads at once; try again")
	case errors.Is(err, timeseries.ErrUnknownSeries):
		return jsonError(c, http.StatusNotFound, "no such series at this precision")
	case errors.Is(err, entity.ErrUnknownKind):
		return jsonError(c, http.StatusNotFound, "no such entity kind")
	case errors.Is(err, entity.ErrUnknownField):
		return jsonError(c, http.StatusBadRequest, "no such field for this kind")
	}
	s.cfg.Logger.Warn("pulse dashboard: read failed", "path", c.Request().URL.Path, "err", err)
	return jsonError(c, http.StatusServiceUnavailable, "backend unavailable")
}

// precisionParam reads the required precision query parameter.
func (s *server) precisionParam(c echo.Context) (int, error) {
	v := c.QueryParam("precision")
	if v == "" {
		return 0, badRequest("precision is required, in seconds: one of " + fmt.Sprint(s.cfg.Store.Schema().Precisions))
	}
	p, err := strconv.Atoi(v)
	if err != nil {
		return 0, badRequest(fmt.Sprintf("precision %q is not a number of seconds", v))
	}
	if err := s.cfg.Store.CheckPrecision(p); err != nil {
		return 0, err
	}
	return p, nil
}

// intParam reads an optional integer query parameter within [lo, hi].
func intParam(c echo.Context, name string, def, lo, hi int64) (int64, error) {
	v := c.QueryParam(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, badRequest(fmt.Sprintf("%s %q is not an integer", name, v))
	}
	if n < lo || n > hi {
		return 0, badRequest(fmt.Sprintf("%s %d is outside %d..%d", name, n, lo, hi))
	}
	return n, nil
}

// window reads the time range of a series request: either last=N (the N
// buckets ending with the current one) or from/to in unix seconds, each
// end optional.
func (s *server) window(c echo.Context, precision int, defLast int64) (r timeseries.Range, current int64, err error) {
	current = timeseries.BucketStart(s.cfg.Store.Now().Unix(), precision)
	const maxUnix = 1 << 40 // far beyond any bucket, small enough to add to safely
	if r.From, err = intParam(c, "from", 0, 0, maxUnix); err != nil {
		return r, current, err
	}
	if r.To, err = intParam(c, "to", 0, 0, maxUnix); err != nil {
		return r, current, err
	}
	if r.From != 0 && r.To != 0 && r.From > r.To {
		return r, current, badRequest(fmt.Sprintf("from %d is after to %d", r.From, r.To))
	}
	maxBuckets := int64(s.cfg.MaxBuckets)
	last, err := intParam(c, "last", min(defLast, maxBuckets), 1, maxBuckets)
	if err != nil {
		return r, current, err
	}
	if c.QueryParam("last") != "" && (r.From != 0 || r.To != 0) {
		return r, current, badRequest("give either last or from/to, not both")
	}
	if last > 0 && r.From == 0 && r.To == 0 {
		r.From, r.To = current-(last-1)*int64(precision), current
	}
	switch fill := c.QueryParam("fill"); fill {
	case "":
	case "zero":
		r.FillZero = true
	default:
		return r, current, badRequest(fmt.Sprintf("fill %q: the only fill is zero", fill))
	}
	if r.FillZero {
		// Bound the filled range before reading: an open end is the
		// current bucket, or MaxBuckets buckets before the other end.
		p := int64(precision)
		if r.To == 0 {
			r.To = max(current, r.From)
		}
		if r.From == 0 {
			r.From = max(1, r.To-(maxBuckets-1)*p)
		}
		if n := (timeseries.BucketStart(r.To, precision)-timeseries.BucketStart(r.From, precision))/p + 1; n > maxBuckets {
			return r, current, badRequest(fmt.Sprintf("range of %d buckets: at most %d may be zero-filled", n, maxBuckets))
		}
	}
	return r, current, nil
}

// seriesName reads and checks the :name path parameter.
func seriesName(c echo.Context) (string, error) {
	name, err := pathParam(c, "name")
	if err != nil {
		return "", badRequest(err.Error())
	}
	if err := timeseries.ValidateName(name); err != nil {
		return "", badRequest("invalid series name: " + strings.TrimPrefix(err.Error(), "timeseries: "))
	}
	return name, nil
}

type countersResponse struct {
	Counters []timeseries.SeriesInfo `json:"counters"`
}

// handleCounters lists every series: GET api/counters.
func (s *server) handleCounters(c echo.Context) error {
	ctx, cancel := s.requestContext(c)
	defer cancel()
	infos, err := s.cfg.Store.Series(ctx)
	if err != nil {
		return s.answerError(c, err)
	}
	return writeJSON(c, countersResponse{Counters: infos})
}

type samplesResponse struct {
	Name      string              `json:"name"`
	Precision int                 `json:"precision"`
	Samples   []timeseries.Sample `json:"samples"`
	// Current is the start of the still-open bucket: its count grows.
	Current int64 `json:"current"`
}

// handleSamples answers one series at one precision:
// GET api/counters/:name?precision=5[&from=&to=|&last=N][&fill=zero].
func (s *server) handleSamples(c echo.Context) error {
	name, err := seriesName(c)
	if err != nil {
		return s.answerError(c, err)
	}
	p, err := s.precisionParam(c)
	if err != nil {
		return s.answerError(c, err)
	}
	r, current, err := s.window(c, p, 0)
	if err != nil {
		return s.answerError(c, err)
	}
	ctx, cancel := s.requestContext(c)
	defer cancel()
	release, err := s.acquireRead(ctx)
	if err != nil {
		return s.answerError(c, err)
	}
	defer release()
	samples, err := s.cfg.Store.Samples(ctx, name, p, r)
	if err != nil {
		return s.answerError(c, err)
	}
	return writeJSON(c, samplesResponse{Name: name, Precision: p, Samples: samples, Current: current})
}

// seriesTotal is one series in the overview's list of all series.
type seriesTotal struct {
	Name  string `json:"name"`
	Total int64  `json:"total"`
}

// seriesWindow is one charted series of the overview.
type seriesWindow struct {
	Name    string              `json:"name"`
	Total   int64               `json:"total"`
	Samples []timeseries.Sample `json:"samples"`
}

type overviewResponse struct {
	Precision int   `json:"precision"`
	From      int64 `json:"from"`
	To        int64 `json:"to"`
	// Current is the start of the still-open bucket; Now is the store's
	// clock, for "how long ago" against times it stamped.
	Current int64 `json:"current"`
	Now     int64 `json:"now"`
	// Top are the busiest series over the window, zero-filled.
	Top []seriesWindow `json:"top"`
	// Pinned are the series asked for by name that exist, zero-filled.
	Pinned []seriesWindow `json:"pinned"`
	// Totals lists every series at this precision, busiest first.
	Totals []seriesTotal `json:"totals"`
}

// handleOverview answers the busiest series over a window, in one batch
// read of every series: GET api/overview?precision=5[&last=N][&n=6]
// [&series=name…].
func (s *server) handleOverview(c echo.Context) error {
	p, err := s.precisionParam(c)
	if err != nil {
		return s.answerError(c, err)
	}
	for _, k := range []string{"from", "to", "fill"} {
		if c.QueryParam(k) != "" {
			return s.answerError(c, badRequest("the overview takes last=N, not "+k))
		}
	}
	r, current, err := s.window(c, p, windowBuckets)
	if err != nil {
		return s.answerError(c, err)
	}
	n, err := intParam(c, "n", int64(s.cfg.Overview), 0, MaxOverview)
	if err != nil {
		return s.answerError(c, err)
	}
	pins := c.QueryParams()["series"]
	if len(pins) > MaxPinned {
		return s.answerError(c, badRequest(fmt.Sprintf("at most %d series may be named", MaxPinned)))
	}
	for _, name := range pins {
		if err := timeseries.ValidateName(name); err != nil {
			return s.answerError(c, badRequest("invalid series name: "+strings.TrimPrefix(err.Error(), "timeseries: ")))
		}
	}

	ctx, cancel := s.requestContext(c)
	defer cancel()
	names, windows, err := s.sharedWindows(ctx, p, r)
	if err != nil {
		return s.answerError(c, err)
	}
	totals := make([]seriesTotal, 0, len(names))
	for _, name := range names {
		var sum int64
		for _, smp := range windows[name] {
			sum += smp.Count
		}
		totals = append(totals, seriesTotal{Name: name, Total: sum})
	}
	slices.SortStableFunc(totals, func(a, b seriesTotal) int {
		switch {
		case a.Total > b.Total:
			return -1
		case a.Total < b.Total:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	totalOf := make(map[string]int64, len(totals))
	for _, t := range totals {
		totalOf[t.Name] = t.Total
	}
	charted := func(name string) seriesWindow {
		return seriesWindow{Name: name, Total: totalOf[name], Samples: timeseries.FillZero(windows[name], p, r.From, r.To)}
	}
	resp := overviewResponse{Precision: p, From: r.From, To: r.To, Current: current, Now: s.cfg.Store.Now().Unix(),
		Top: []seriesWindow{}, Pinned: []seriesWindow{}, Totals: totals}
	for _, t := range totals {
		if int64(len(resp.Top)) >= n || t.Total == 0 {
			break
		}
		resp.Top = append(resp.Top, charted(t.Name))
	}
	seen := map[string]bool{}
	for _, name := range pins {
		if _, ok := windows[name]; ok && !seen[name] {
			seen[name] = true
			resp.Pinned = append(resp.Pinned, charted(name))
		}
	}
	return writeJSON(c, resp)
}

// healthResponse is the recorder's health and the verdict drawn from it.
type healthResponse struct {
	timeseries.Health
	// OK is false when Redis is not answering, or no flush succeeded for
	// DefaultStaleFlushes flush intervals while hits are pending; the
	// answer is then 503.
	OK bool `json:"ok"`
	// Problem says what is wrong when OK is false.
	Problem string `json:"problem,omitempty"`
}

// handleHealth answers the recorder's health, 200 when recording works
// and 503 when it does not, so it serves as a probe: GET api/health.
func (s *server) handleHealth(c echo.Context) error {
	if s.cfg.Health == nil {
		return jsonError(c, http.StatusNotFound, "no health reporter is configured")
	}
	h := s.cfg.Health.Health()
	resp := healthResponse{Health: h, OK: true}
	// The recorder learns of an outage only when it flushes, and an idle
	// one does not: ask Redis too, with one cheap read.
	ctx, cancel := s.requestContext(c)
	defer cancel()
	pingErr := s.pingRedis(ctx)
	// Since the last flush that ended well, empty or not: hits that
	// arrived after an idle spell are not late.
	since := h.LastFlush
	if h.LastFlushOK.After(since) {
		since = h.LastFlushOK
	}
	if since.IsZero() || since.Before(s.started) {
		since = s.started
	}
	interval := cmp.Or(s.cfg.FlushInterval, h.FlushInterval, timeseries.DefaultFlushInterval)
	stale := time.Duration(DefaultStaleFlushes) * interval
	switch {
	case !h.RedisUp:
		resp.OK, resp.Problem = false, "redis is down: the last flush failed"
	case pingErr != nil:
		s.cfg.Logger.Warn("pulse dashboard: health: redis does not answer", "err", pingErr)
		resp.OK, resp.Problem = false, "redis does not answer"
	case h.PendingHits > 0 && s.cfg.Store.Now().Sub(since) > stale:
		resp.OK, resp.Problem = false, fmt.Sprintf("no flush for more than %v while hits are pending", stale)
	}
	// The last error's text stays in the log: it may name hosts.
	resp.LastError = ""
	c.Response().Header().Set("Cache-Control", "no-store")
	if !resp.OK {
		return c.JSON(http.StatusServiceUnavailable, resp)
	}
	return c.JSON(http.StatusOK, resp)
}

// pingRedis reads one series that need not exist: a single round trip
// that tells whether Redis answers.
func (s *server) pingRedis(ctx context.Context) error {
	p := s.cfg.Store.Schema().Precisions[0]
	_, err := s.cfg.Store.Samples(ctx, "pulse:health", p, timeseries.Range{From: 1, To: 1})
	if err != nil && !errors.Is(err, timeseries.ErrUnknownSeries) {
		return err
	}
	return nil
}

// entities returns the configured Entities, or nil after answering 404.
func (s *server) entities(c echo.Context) (Entities, error) {
	if s.cfg.Entities == nil {
		return nil, jsonError(c, http.StatusNotFound, "no entity counters are configured")
	}
	return s.cfg.Entities, nil
}

type kindsResponse struct {
	Kinds []entity.KindInfo `json:"kinds"`
}

// handleKinds lists the entity kinds and their fields: GET api/entities.
func (s *server) handleKinds(c echo.Context) error {
	ents, err := s.entities(c)
	if ents == nil {
		return err
	}
	kinds := ents.Kinds()
	if kinds == nil {
		kinds = []entity.KindInfo{}
	}
	return writeJSON(c, kindsResponse{Kinds: kinds})
}

// entityKind reads the :kind path parameter and its declared fields.
func entityKind(c echo.Context, ents Entities) (kind string, fields []string, err error) {
	kind, err = pathParam(c, "kind")
	if err != nil {
		return "", nil, badRequest(err.Error())
	}
	for _, k := range ents.Kinds() {
		if k.Name == kind {
			return kind, k.Fields, nil
		}
	}
	return "", nil, entity.ErrUnknownKind
}

func parseID(v string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, badRequest(fmt.Sprintf("id %q is not an integer", v))
	}
	return id, nil
}

// orderedCounts writes counts as a JSON object in the kind's declared
// field order, then any other fields by name.
type orderedCounts struct {
	fields []string
	counts entity.Counts
}

func (o orderedCounts) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	done := make(map[string]bool, len(o.fields))
	add := func(k string, v int64) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, k)
		b = append(b, ':')
		b = strconv.AppendInt(b, v, 10)
	}
	for _, f := range o.fields {
		if v, ok := o.counts[f]; ok && !done[f] {
			done[f] = true
			add(f, v)
		}
	}
	var rest []string
	for k := range o.counts {
		if !done[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		add(k, o.counts[k])
	}
	return append(b, '}'), nil
}

type entityResponse struct {
	Kind   string        `json:"kind"`
	ID     string        `json:"id"`
	Counts orderedCounts `json:"counts"`
}

// handleEntity answers one entity's counts: GET api/entities/:kind/:id.
func (s *server) handleEntity(c echo.Context) error {
	ents, err := s.entities(c)
	if ents == nil {
		return err
	}
	kind, fields, err := entityKind(c, ents)
	if err != nil {
		return s.answerError(c, err)
	}
	raw, err := pathParam(c, "id")
	if err != nil {
		return s.answerError(c, badRequest(err.Error()))
	}
	id, err := parseID(raw)
	if err != nil {
		return s.answerError(c, err)
	}
	ctx, cancel := s.requestContext(c)
	defer cancel()
	counts, err := ents.Get(ctx, kind, id)
	if err != nil {
		return s.answerError(c, err)
	}
	return writeJSON(c, entityResponse{Kind: kind, ID: strconv.FormatInt(id, 10), Counts: orderedCounts{fields, counts}})
}

type batchEntity struct {
	ID     string        `json:"id"`
	Counts orderedCounts `json:"counts"`
}

type batchResponse struct {
	Kind     string        `json:"kind"`
	Entities []batchEntity `json:"entities"`
}

// handleEntityBatch answers several entities: GET api/entities/:kind?ids=1,2,3.
func (s *server) handleEntityBatch(c echo.Context) error {
	ents, err := s.entities(c)
	if ents == nil {
		return err
	}
	kind, fields, err := entityKind(c, ents)
	if err != nil {
		return s.answerError(c, err)
	}
	raw := c.QueryParam("ids")
	if strings.TrimSpace(raw) == "" {
		return s.answerError(c, badRequest("ids is required: a comma-separated list of integers"))
	}
	// Count before parsing, so a huge list costs nothing.
	if n := strings.Count(raw, ",") + 1; n > MaxIDs {
		return s.answerError(c, badRequest(fmt.Sprintf("%d ids: at most %d per request", n, MaxIDs)))
	}
	parts := strings.Split(raw, ",")
	ids := make([]int64, 0, len(parts))
	for _, part := range parts {
		id, err := parseID(part)
		if err != nil {
			return s.answerError(c, err)
		}
		ids = append(ids, id)
	}
	ctx, cancel := s.requestContext(c)
	defer cancel()
	counts, err := ents.BatchGet(ctx, kind, ids)
	if err != nil {
		return s.answerError(c, err)
	}
	if len(counts) != len(ids) {
		return s.answerError(c, fmt.Errorf("dashboard: %d counts for %d ids", len(counts), len(ids)))
	}
	resp := batchResponse{Kind: kind, Entities: make([]batchEntity, len(ids))}
	for i, id := range ids {
		resp.Entities[i] = batchEntity{ID: strconv.FormatInt(id, 10), Counts: orderedCounts{fields, counts[i]}}
	}
	return writeJSON(c, resp)
}

type topResponse struct {
	Kind  string       `json:"kind"`
	Field string       `json:"field"`
	Top   []rankedItem `json:"top"`
}

// rankedItem is one entity of a top list, with its label when
// Config.Labels gives one.
type rankedItem struct {
	entity.Ranked
	Label string `json:"label,omitempty"`
}

// handleEntityTop answers the entities with the highest count of a field:
// GET api/entities/:kind/top?field=views[&n=10].
func (s *server) handleEntityTop(c echo.Context) error {
	ents, err := s.entities(c)
	if ents == nil {
		return err
	}
	kind, fields, err := entityKind(c, ents)
	if err != nil {
		return s.answerError(c, err)
	}
	field := c.QueryParam("field")
	if field == "" {
		return s.answerError(c, badRequest("field is required: one of "+strings.Join(fields, ", ")))
	}
	if !slices.Contains(fields, field) {
		return s.answerError(c, entity.ErrUnknownField)
	}
	n, err := intParam(c, "n", 10, 1, MaxTop)
	if err != nil {
		return s.answerError(c, err)
	}
	ctx, cancel := s.requestContext(c)
	defer cancel()
	top, err := ents.Top(ctx, kind, field, int(n))
	if err != nil {
		return s.answerError(c, err)
	}
	items := make([]rankedItem, len(top))
	ids := make([]int64, len(top))
	for i, r := range top {
		items[i].Ranked = r
		ids[i] = r.ID
	}
	if s.cfg.Labels != nil && len(ids) > 0 {
		// Labels are a nicety: without them the list still answers.
		if labels, err := s.cfg.Labels(ctx, kind, ids); err == nil {
			for i := range items {
				items[i].Label = labels[items[i].ID]
			}
		}
	}
	return writeJSON(c, topResponse{Kind: kind, Field: field, Top: items})
}
