package dashboard

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// MaxQuantiles bounds the quantiles one durations request may ask for.
const MaxQuantiles = 10

// defaultQuantiles are those of a durations request without q, and of every
// route of api/routes.
var defaultQuantiles = []float64{0.5, 0.9, 0.99}

// quantiles are the quantiles a request asks for and their JSON keys.
type quantiles struct {
	qs   []float64
	keys []string
}

// quantileKey names quantile q by its percentile: "p" and 100·q rounded
// to four decimals, without trailing zeros (0.5 → p50, 0.999 → p99.9,
// 1 → p100).
func quantileKey(q float64) string {
	return "p" + strconv.FormatFloat(math.Round(q*1e6)/1e4, 'f', -1, 64)
}

// newQuantiles names qs.
func newQuantiles(qs []float64) quantiles {
	out := quantiles{qs: qs}
	for _, q := range qs {
		out.keys = append(out.keys, quantileKey(q))
	}
	return out
}

// quantilesParam reads q=0.5,0.95,0.999: each in (0, 1], at most
// MaxQuantiles, no two of the same key.
func quantilesParam(r *http.Request) (quantiles, error) {
	v := r.URL.Query().Get("q")
	if v == "" {
		return newQuantiles(defaultQuantiles), nil
	}
	parts := strings.Split(v, ",")
	if len(parts) > MaxQuantiles {
		return quantiles{}, badRequest("at most " + strconv.Itoa(MaxQuantiles) + " quantiles may be asked for")
	}
	qs := make([]float64, 0, len(parts))
	seen := map[string]bool{}
	for _, p := range parts {
		q, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(q > 0 && q <= 1) {
			return quantiles{}, badRequest("quantile " + strconv.Quote(p) + " is not a number in (0, 1]")
		}
		k := quantileKey(q)
		if seen[k] {
			return quantiles{}, badRequest("quantile " + strconv.Quote(p) + " is asked for twice (as " + k + ")")
		}
		seen[k] = true
		qs = append(qs, q)
	}
	return newQuantiles(qs), nil
}

// durationStats summarize one histogram, in milliseconds. Its JSON is
// {"count":…,"mean":…,"min":…,"max":…} and then one key per quantile,
// in the order asked for.
type durationStats struct {
	count          uint64
	mean, min, max float64
	keys           []string
	values         []float64
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// statsOf summarizes h; an empty h gives zeros.
func statsOf(h *timeseries.Histogram, q quantiles) durationStats {
	st := durationStats{count: h.Count(), mean: ms(h.Mean()), min: ms(h.Min()), max: ms(h.Max()), keys: q.keys}
	st.values = make([]float64, len(q.qs))
	for i, x := range q.qs {
		st.values[i] = ms(h.Quantile(x))
	}
	return st
}

func (st durationStats) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 64+16*len(st.keys))
	b = append(b, `{"count":`...)
	b = strconv.AppendUint(b, st.count, 10)
	num := func(key string, v float64) {
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		b = strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	num("mean", st.mean)
	num("min", st.min)
	num("max", st.max)
	for i, k := range st.keys {
		num(k, st.values[i])
	}
	return append(b, '}'), nil
}

// durationsBucket is one bucket of a durations answer.
type durationsBucket struct {
	Time int64 `json:"time"`
	durationStats
}

func (lb durationsBucket) MarshalJSON() ([]byte, error) {
	st, _ := lb.durationStats.MarshalJSON()
	b := strconv.AppendInt([]byte(`{"time":`), lb.Time, 10)
	return append(append(b, ','), st[1:]...), nil
}

type durationsResponse struct {
	Name      string            `json:"name"`
	Precision int               `json:"precision"`
	From      int64             `json:"from"`
	To        int64             `json:"to"`
	Current   int64             `json:"current"`
	Buckets   []durationsBucket `json:"buckets"`
	Window    durationStats     `json:"window"`
	// Heatmap is there when heatmap=1 asks for it.
	Heatmap *heatmap `json:"heatmap,omitempty"`
}

// durations answers one series' request durations at one precision,
// every bucket of the window (zero-filled) and the window merged:
// GET api/durations/{name}?precision=5[&from=&to=|&last=N][&q=0.5,0.99]
// [&heatmap=1]; heatmap=1 adds per bucket the counts of fixed duration
// rows and the hits, 4xx and 5xx answers.
func (s *server) durations(r *http.Request) (durationsResponse, error) {
	name, err := seriesName(r)
	if err != nil {
		return durationsResponse{}, err
	}
	p, err := s.precisionParam(r)
	if err != nil {
		return durationsResponse{}, err
	}
	q, err := quantilesParam(r)
	if err != nil {
		return durationsResponse{}, err
	}
	heat, err := wantsHeatmap(r)
	if err != nil {
		return durationsResponse{}, err
	}
	rng, current, err := s.window(r, p, windowBuckets)
	if err != nil {
		return durationsResponse{}, err
	}
	if err := closeRange(&rng, p, current, int64(s.cfg.MaxBuckets), "of durations"); err != nil {
		return durationsResponse{}, err
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	release, err := s.reads.acquire(ctx)
	if err != nil {
		return durationsResponse{}, err
	}
	defer release()
	names := []string{name}
	if heat {
		names = append(names, classNames(name)...)
	}
	known, err := s.cfg.Store.SamplesMany(ctx, names, p, timeseries.Range{From: rng.From, To: rng.To})
	if err != nil {
		return durationsResponse{}, err
	}
	if _, ok := known[name]; !ok {
		return durationsResponse{}, timeseries.ErrUnknownSeries
	}
	d, err := s.store.Durations(ctx, name, p, rng.From, rng.To)
	if err != nil {
		return durationsResponse{}, err
	}
	resp := durationsResponse{Name: name, Precision: p, From: timeseries.BucketStart(rng.From, p), To: timeseries.BucketStart(rng.To, p),
		Current: current, Buckets: make([]durationsBucket, 0, len(d.Buckets)), Window: statsOf(d.Window, q)}
	for _, b := range d.Buckets {
		resp.Buckets = append(resp.Buckets, durationsBucket{Time: b.Start, durationStats: statsOf(b.Hist, q)})
	}
	if heat {
		resp.Heatmap = newHeatmap(name, d, known)
	}
	return resp, nil
}

// closeRange closes the open ends of a read of durations or visitors
// (what), as boundFill does for a zero-filled one, and bounds its buckets
// by maxBuckets.
func closeRange(rng *timeseries.Range, precision int, current, maxBuckets int64, what string) error {
	err := boundFill(rng, precision, current, maxBuckets)
	var bad badRequest
	if errors.As(err, &bad) {
		return badRequest(strings.Replace(string(bad), "may be zero-filled", what+" may be read", 1))
	}
	return err
}
