package alert

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/pulse-dev/pulse/internal/seriesname"
	"github.com/pulse-dev/pulse/timeseries"
)

// observation is one alert instance's reading at one evaluation: a rule
// applied to one series, at one severity.
type observation struct {
	Key         string
	Rule        string
	Series      string
	Labels      map[string]string
	Annotations map[string]string
	Breached    bool
	Value       float64
	Threshold   float64
	// Window is what Value was read over: an SLO's long window of the
	// pair Value and Threshold belong to, with its short one in Short.
	Window, Short time.Duration
	Unit          string // what Value and Threshold count; "" for a ratio
	unknown       bool   // nothing could be read: hold the state
}

// Detector is what an Anomaly rule asks whether a series breaks from its
// expectation at now. Package forecast/fromstore provides one from the
// forecasts (anomaly.Detector, in alert/anomaly); an app may bring its own.
type Detector interface {
	Detect(ctx context.Context, series string, now time.Time) (Finding, error)
}

// Finding is a Detector's answer for one series.
type Finding struct {
	Breached  bool
	Value     float64 // e.g. the observed value or the anomaly score
	Threshold float64 // what Value was held against
	What      string  // e.g. "drop", "spike", "level shift"
}

// planInput is what planning an evaluation needs besides the rules.
type planInput struct {
	now    time.Time
	routes []string // route series in the known set, for EveryRoute
	// slowSince says since when the recorders count the requests slower
	// than each threshold, by timeseries.ThresholdText.
	slowSince  map[string]time.Time
	precisions []int // ascending
	maxBuckets int
}

// observer turns what a plan read into the observations of one rule.
type observer func(ctx context.Context, d readData) []observation

// plan adds what each rule needs to read to rp and returns one observer
// per rule; Latency rules read durations instead (planLatencies).
func plan(rules []Rule, in planInput, rp readPlan, det Detector) []observer {
	var obs []observer
	for i := range rules {
		r := &rules[i]
		names := r.targets(in.routes)
		switch r.Kind {
		case Availability:
			obs = append(obs, planAvailability(r, names, in, rp))
		case Absence:
			obs = append(obs, planAbsence(r, names, in, rp))
		case Anomaly:
			obs = append(obs, planAnomaly(r, names, in.now, det))
		}
	}
	return obs
}

// targets are the series r applies to.
func (r *Rule) targets(routes []string) []string {
	if r.Series == EveryRoute {
		return routes
	}
	return []string{r.Series}
}

// errorSeries is the series that counts base's 5xx answers.
func errorSeries(base string) string {
	if base == App {
		return seriesname.Status(500)
	}
	return seriesname.WithClass(base, 500)
}

// newObservation labels an instance of r on series at severity.
func newObservation(r *Rule, series, severity string) observation {
	labels := maps.Clone(r.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels["alertname"] = r.Name
	labels["severity"] = severity
	if series != "" && series != App {
		labels["route"] = series
	}
	key := r.Name + "\x00" + severity + "\x00" + series
	return observation{Key: key, Rule: r.Name, Series: series, Labels: labels, Annotations: maps.Clone(r.Annotations)}
}

// burnPair is one window pair's spans.
type burnPair struct {
	w           Window
	long, short span
}

// burnPairs are the spans of r's window pairs at in.now, each read at
// the precision pickPrecision gives.
func burnPairs(r *Rule, in planInput) []burnPair {
	pairs := make([]burnPair, len(r.Windows))
	for i, w := range r.Windows {
		pl := pickPrecision(in.precisions, w.Long.Std(), 0, in.maxBuckets)
		ps := pickPrecision(in.precisions, w.Short.Std(), 0, in.maxBuckets)
		pairs[i] = burnPair{w: w, long: windowOf(in.now, w.Long.Std(), 0, pl), short: windowOf(in.now, w.Short.Std(), 0, ps)}
	}
	return pairs
}

func planAvailability(r *Rule, names []string, in planInput, rp readPlan) observer {
	pairs := burnPairs(r, in)
	for _, n := range names {
		for _, p := range pairs {
			for _, s := range []span{p.long, p.short} {
				rp.want(n, s)
				rp.want(errorSeries(n), s)
			}
		}
	}
	budget := 1 - r.Target/100
	now := in.now.Unix()
	return func(_ context.Context, d readData) []observation {
		var out []observation
		for _, n := range names {
			burn := func(s span) float64 {
				total := d.sum(n, s, now)
				if total <= 0 {
					return 0 // no requests burn no budget
				}
				return d.sum(errorSeries(n), s, now) / total / budget
			}
			out = appendBurns(out, r, n, pairs, burn)
		}
		return out
	}
}

// appendBurns adds one observation per severity of r's windows for
// series: breached when any of that severity's pairs burns faster than
// its rate over both windows. Its value is the slower of the two burns
// of the pair nearest to (or furthest past) its rate, its threshold and
// windows that pair's.
func appendBurns(out []observation, r *Rule, series string, pairs []burnPair, burn func(span) float64) []observation {
	first := len(out)
	for _, p := range pairs {
		v := min(burn(p.long), burn(p.short))
		i := first
		for ; i < len(out) && out[i].Labels["severity"] != p.w.Severity; i++ {
		}
		if i == len(out) {
			out = append(out, newObservation(r, series, p.w.Severity))
			out[i].Threshold = p.w.Burn
			out[i].Value = -1 // below any pair's, so the first pair's is taken
		}
		o := &out[i]
		if v/p.w.Burn > o.Value/o.Threshold {
			o.Value, o.Threshold, o.Window, o.Short = v, p.w.Burn, p.w.Long.Std(), p.w.Short.Std()
		}
		o.Breached = o.Breached || v > p.w.Burn
	}
	for i := first; i < len(out); i++ {
		setAnnotation(&out[i], "burn_rate", strconv.FormatFloat(out[i].Value, 'g', 4, 64))
	}
	return out
}

func setAnnotation(o *observation, k, v string) {
	if o.Annotations == nil {
		o.Annotations = map[string]string{}
	}
	if _, set := o.Annotations[k]; !set {
		o.Annotations[k] = v
	}
}

const (
	day  = 24 * time.Hour
	week = 7 * day
)

func planAbsence(r *Rule, names []string, in planInput, rp readPlan) observer {
	q := r.Quiet.Std()
	var spans [3]span // now, a day before, a week before
	for i, back := range []time.Duration{0, day, week} {
		spans[i] = windowOf(in.now, q, back, pickPrecision(in.precisions, q, back, in.maxBuckets))
	}
	for _, n := range names {
		for _, s := range spans {
			rp.want(n, s)
		}
	}
	now := in.now.Unix()
	return func(_ context.Context, d readData) []observation {
		out := make([]observation, 0, len(names))
		for _, n := range names {
			cur, dayAgo, weekAgo := d.sum(n, spans[0], now), d.sum(n, spans[1], now), d.sum(n, spans[2], now)
			o := newObservation(r, n, r.Severity)
			o.Value, o.Threshold, o.Window, o.Unit = cur, r.MinBaseline, q, "requests"
			o.Breached = cur == 0 && dayAgo >= r.MinBaseline && weekAgo >= r.MinBaseline
			setAnnotation(&o, "baseline", fmt.Sprintf("%.0f a day before, %.0f a week before", dayAgo, weekAgo))
			out = append(out, o)
		}
		return out
	}
}

func planAnomaly(r *Rule, names []string, now time.Time, det Detector) observer {
	return func(ctx context.Context, _ readData) []observation {
		out := make([]observation, 0, len(names))
		for _, n := range names {
			o := newObservation(r, n, r.Severity)
			f, err := det.Detect(ctx, n, now)
			if err != nil {
				o.unknown = true
			} else {
				o.Breached, o.Value, o.Threshold = f.Breached, f.Value, f.Threshold
				if f.What != "" {
					setAnnotation(&o, "anomaly", f.What)
				}
			}
			out = append(out, o)
		}
		return out
	}
}

// routesOf picks the route series (a method and a path, no class) from
// the known series.
func routesOf(infos []timeseries.SeriesInfo) []string {
	var out []string
	for _, si := range infos {
		if rn, ok := timeseries.ParseRouteName(si.Name); ok && rn.Method != "" && rn.Class == "" {
			out = append(out, si.Name)
		}
	}
	return out
}
