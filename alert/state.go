package alert

import (
	"maps"
	"time"
)

// State is where an alert instance is in its life.
type State string

const (
	Inactive State = "inactive"
	// Pending: breached, but not yet for Rule.For.
	Pending State = "pending"
	Firing  State = "firing"
	// Resolved: it fired, and the breach has been over for
	// Rule.KeepFiringFor.
	Resolved State = "resolved"
)

// Status is one alert instance's state, as kept in Redis and served by
// Handler.
type Status struct {
	// Key identifies the instance: rule, severity, series and, for a
	// Health alert, the instance, joined by NULs. It is the field name
	// in Redis, not part of the JSON.
	Key         string            `json:"-"`
	Rule        string            `json:"rule"`
	Series      string            `json:"series,omitempty"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations,omitempty"`
	State       State             `json:"state"`
	// Since is when State began.
	Since time.Time `json:"since"`
	// ActiveAt is when the breach that led to Pending or Firing began;
	// it is the incident's startsAt and tells incidents apart.
	ActiveAt   time.Time `json:"active_at,omitzero"`
	LastBreach time.Time `json:"last_breach,omitzero"`
	Value      float64   `json:"value"`
	Threshold  float64   `json:"threshold"`
	// Window is what Value was read over: for an SLO alert the long
	// window of the pair that Value and Threshold belong to, with its
	// short window in ShortWindow; for an absence alert the quiet window.
	Window      Duration `json:"window,omitempty"`
	ShortWindow Duration `json:"short_window,omitempty"`
	// Unit is what Value and Threshold count: "hits", "s"; "" for a
	// ratio such as a burn rate.
	Unit string `json:"unit,omitempty"`
	// ResolveHeld says why a firing alert whose breach is over is not
	// resolved yet: another instance may hold hits Redis lacks.
	ResolveHeld string `json:"resolve_held,omitempty"`
	// Stale is set while the data to evaluate it is missing (Redis
	// unreachable, a flush pending): the state is held, not changed.
	Stale bool `json:"stale,omitempty"`

	written time.Time // when this copy was last stored, by the holder
}

// Transition is one change of state, kept in Redis's log of the last N.
type Transition struct {
	At     time.Time         `json:"at"`
	Key    string            `json:"-"`
	Rule   string            `json:"rule"`
	Labels map[string]string `json:"labels"`
	From   State             `json:"from"`
	To     State             `json:"to"`
	Value  float64           `json:"value"`
}

// step moves s by one observation at now under r's For and
// KeepFiringFor; it reports whether the state changed. An unknown
// observation (its data missing) changes nothing but Stale. A firing
// alert resolves only once its breach has been over for quiet too: an
// instance cut off from Redis just after its last flush looks up to date
// until its stale bound has passed, and the hits it holds meanwhile are
// missing from the data that looks clear. While wait is not "", a firing
// alert whose breach is over stays firing, with wait (why) in
// ResolveHeld.
func (s *Status) step(o observation, r *Rule, now time.Time, wait string, quiet time.Duration) bool {
	if o.unknown {
		s.Stale = true
		return false
	}
	s.Stale, s.ResolveHeld = false, ""
	s.Rule, s.Series, s.Labels, s.Annotations = o.Rule, o.Series, o.Labels, maps.Clone(o.Annotations)
	s.Value, s.Threshold, s.Window, s.ShortWindow = o.Value, o.Threshold, Duration(o.Window), Duration(o.Short)
	s.Unit = o.Unit
	if o.Breached {
		s.LastBreach = now
	}
	switch s.State {
	case "", Inactive, Resolved:
		if !o.Breached {
			if s.State == "" {
				s.State, s.Since = Inactive, now
			}
			return false
		}
		s.ActiveAt = now
		if r.For <= 0 {
			return s.moveTo(Firing, now)
		}
		return s.moveTo(Pending, now)
	case Pending:
		if !o.Breached {
			return s.moveTo(Inactive, now)
		}
		if now.Sub(s.ActiveAt) >= r.For.Std() {
			return s.moveTo(Firing, now)
		}
	case Firing:
		if o.Breached || now.Sub(s.LastBreach) < max(r.KeepFiringFor.Std(), quiet) {
			break
		}
		if wait != "" {
			s.ResolveHeld = wait
			return false
		}
		return s.moveTo(Resolved, now)
	}
	return false
}

func (s *Status) moveTo(st State, now time.Time) bool {
	s.State, s.Since = st, now
	return true
}

// Sent is what was last delivered of an alert instance to one receiver.
type Sent struct {
	State    State     `json:"state"`
	ActiveAt time.Time `json:"active_at"` // the incident it was about
	At       time.Time `json:"at"`
}

// due is the notification s needs given what was sent: firing once per
// incident, resolved once after a firing was sent; "" for none.
func (s *Status) due(sent Sent) State {
	switch {
	case s.State == Firing && !(sent.State == Firing && sent.ActiveAt.Equal(s.ActiveAt)):
		return Firing
	case s.State == Resolved && sent.State == Firing && sent.ActiveAt.Equal(s.ActiveAt):
		return Resolved
	}
	return ""
}
