package alert

import (
	"maps"
	"time"

	"github.com/pulse-dev/pulse/internal/seriesname"
)

// Kind says what a rule watches.
type Kind string

const (
	// Availability is an SLO on the share of requests that are not 5xx,
	// alerted by multiwindow burn rates.
	Availability Kind = "availability"
	// Latency is an SLO on the share of requests that finish within
	// Rule.Threshold, alerted by multiwindow burn rates like Availability.
	// It reads the recorder's duration histograms, whose bins are
	// base-2 exponential: a threshold falls inside a bin, and a request
	// counts as slow when its bin lies above the bin edge nearest to the
	// threshold (nearest by ratio). That edge is within half a bin of the
	// threshold, closer than the histograms' accuracy (5 % by default);
	// a threshold on an edge, such as 500 ms or any power of two seconds,
	// is exact. Alerts carry the edge as the annotation
	// "latency_threshold".
	Latency Kind = "latency"
	// Absence fires when a series receives nothing for Rule.Quiet while
	// the same window a day and a week earlier had at least
	// Rule.MinBaseline hits.
	Absence Kind = "absence"
	// Health watches the evaluating instance's own recorder: Redis
	// unreachable, hits or visitors dropped, the flush stalled.
	Health Kind = "health"
	// Anomaly asks Config.Detector whether the series breaks from its
	// forecast; a rule of this kind needs one.
	Anomaly Kind = "anomaly"
)

// Series a rule may name besides one series.
const (
	// App is the series of every request the middlewares count.
	App = seriesname.Hits
	// EveryRoute makes the rule a template applied to each route series
	// in the known set; its alerts carry the route as a label.
	EveryRoute = "*"
)

// HealthCheck names what a Health rule looks at.
type HealthCheck string

const (
	// RedisDown: the recorder's latest flush failed (Health.RedisUp false).
	RedisDown HealthCheck = "redis_down"
	// Dropped: hits or visitors were dropped since the last evaluation.
	Dropped HealthCheck = "dropped"
	// FlushStalled: no flush has ended well for Rule.Quiet.
	FlushStalled HealthCheck = "flush_stalled"
)

// Window is one window pair of a multiwindow burn-rate alert: it is
// breached when the error budget burns faster than Burn over both Long
// and Short. Short makes the alert stop soon after the burn does.
type Window struct {
	Long     Duration `json:"long"`
	Short    Duration `json:"short"`
	Burn     float64  `json:"burn"`
	Severity string   `json:"severity"`
}

// DefaultWindows are the window pairs of Google's SRE workbook for a
// 30-day SLO: 2 % of the budget in 1 h or 5 % in 6 h pages, 10 % in
// 3 days opens a ticket.
func DefaultWindows() []Window {
	return []Window{
		{Long: Duration(time.Hour), Short: Duration(5 * time.Minute), Burn: 14.4, Severity: "page"},
		{Long: Duration(6 * time.Hour), Short: Duration(30 * time.Minute), Burn: 6, Severity: "page"},
		{Long: Duration(72 * time.Hour), Short: Duration(6 * time.Hour), Burn: 1, Severity: "ticket"},
	}
}

// Rule is one alerting rule. Zero fields take the defaults of its kind
// (see WithDefaults).
type Rule struct {
	// Name identifies the rule; it is the alertname label.
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Series is App ("hits"), a route's series ("GET /posts/:id") or
	// EveryRoute ("*"). Health rules name none.
	Series string `json:"series,omitempty"`

	// Target is an SLO's objective in percent, 0 < Target < 100: the
	// share of requests that are not 5xx (Availability, default 99.9) or
	// that finish within Threshold (Latency, default 99).
	Target float64 `json:"target,omitempty"`
	// Threshold is how long a request of a Latency rule may take and
	// still count as fast; required. It is taken at the bin edge of the
	// duration histograms nearest to it (see Latency).
	Threshold Duration `json:"threshold,omitempty"`
	// Period is the SLO period; default 30 days.
	Period Duration `json:"period,omitempty"`
	// Windows are the burn-rate window pairs; default DefaultWindows.
	Windows []Window `json:"windows,omitempty"`

	// Quiet is how long a series must receive nothing for an Absence
	// rule (default 15 m), or a flush take for FlushStalled (default 30 s).
	Quiet Duration `json:"quiet,omitempty"`
	// MinBaseline is the hits an Absence rule needs in the same window a
	// day and a week earlier; default 10.
	MinBaseline float64 `json:"min_baseline,omitempty"`

	// Check is what a Health rule watches.
	Check HealthCheck `json:"check,omitempty"`

	// For is how long a breach must last before the alert fires.
	For Duration `json:"for,omitempty"`
	// KeepFiringFor keeps a firing alert firing that long after the
	// breach ends, so a flapping signal does not resolve and refire.
	KeepFiringFor Duration `json:"keep_firing_for,omitempty"`
	// Severity labels Absence, Health and Anomaly alerts; default "page"
	// (Health: "ticket").
	Severity string `json:"severity,omitempty"`

	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// DefaultRules are the rules an app gets when it names none: an
// availability SLO and absence for the app, and Pulse's own health.
// Per-route rules are opt-in.
func DefaultRules() []Rule {
	return []Rule{
		{Name: "PulseAppAvailability", Kind: Availability, Series: App},
		{Name: "PulseAppAbsent", Kind: Absence, Series: App},
		{Name: "PulseRedisDown", Kind: Health, Check: RedisDown, For: Duration(time.Minute)},
		{Name: "PulseDropped", Kind: Health, Check: Dropped},
		{Name: "PulseFlushStalled", Kind: Health, Check: FlushStalled},
	}
}

// WithDefaults returns r with its zero fields set to its kind's defaults.
func (r Rule) WithDefaults() Rule {
	switch r.Kind {
	case Availability, Latency:
		if r.Target == 0 {
			r.Target = 99.9
			if r.Kind == Latency {
				r.Target = 99
			}
		}
		if r.Period == 0 {
			r.Period = Duration(30 * 24 * time.Hour)
		}
		if r.Windows == nil {
			r.Windows = DefaultWindows()
		}
	case Absence:
		if r.Quiet == 0 {
			r.Quiet = Duration(15 * time.Minute)
		}
		if r.MinBaseline == 0 {
			r.MinBaseline = 10
		}
	case Health:
		if r.Quiet == 0 && r.Check == FlushStalled {
			r.Quiet = Duration(30 * time.Second)
		}
		if r.Severity == "" {
			r.Severity = "ticket"
		}
	}
	if r.Severity == "" && r.Kind != Availability && r.Kind != Latency {
		r.Severity = "page"
	}
	r.Labels, r.Annotations = maps.Clone(r.Labels), maps.Clone(r.Annotations)
	r.Windows = append([]Window(nil), r.Windows...)
	return r
}
