package alert

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// EvaluatorHealth is the evaluator's state, for status pages and probes.
type EvaluatorHealth struct {
	Instance string `json:"instance"`
	// Leader is whether this instance holds the lease and evaluates.
	Leader bool  `json:"leader"`
	Token  int64 `json:"token,omitempty"`
	// LastEval is when this instance last evaluated the rules over series.
	LastEval  time.Time `json:"last_eval,omitzero"`
	LastError string    `json:"last_error,omitempty"`
	// DataMissing: the latest evaluation found Redis unreachable or the
	// recorder's flushes lagging, and held every alert as it was.
	DataMissing bool `json:"data_missing"`
	// ResolvesHeld says why the latest evaluation let no firing alert
	// resolve: another instance, silent, may hold hits Redis lacks.
	// Alerts still fire meanwhile.
	ResolvesHeld string `json:"resolves_held,omitempty"`
	Evaluations  int64  `json:"evaluations"`
	// Undelivered counts notifications given up on, over all receivers.
	Undelivered int64            `json:"undelivered"`
	Receivers   []ReceiverHealth `json:"receivers"`
}

// Health returns a snapshot of the evaluator's state.
func (e *Evaluator) Health() EvaluatorHealth {
	e.mu.Lock()
	h := EvaluatorHealth{Instance: e.cfg.Instance, Leader: e.mem.token != 0, Token: e.mem.token, LastEval: e.stats.lastEval,
		LastError: e.stats.lastErr, DataMissing: e.stats.dataMissing, ResolvesHeld: e.stats.waiting, Evaluations: e.stats.evals}
	e.mu.Unlock()
	h.Receivers = []ReceiverHealth{}
	for _, o := range e.out {
		rh := o.health()
		h.Undelivered += rh.Undelivered
		h.Receivers = append(h.Receivers, rh)
	}
	return h
}

// ruleView is one rule and its alert instances, as Handler serves them.
// Target (an SLO's), Threshold (a latency SLO's) and Check (a health
// rule's) tell what the alerts' values measure.
type ruleView struct {
	Name      string      `json:"name"`
	Kind      Kind        `json:"kind"`
	Series    string      `json:"series,omitempty"`
	Target    float64     `json:"target,omitempty"`
	Threshold Duration    `json:"threshold,omitempty"`
	Check     HealthCheck `json:"check,omitempty"`
	// For is how long a breach lasts before it fires.
	For    Duration `json:"for,omitempty"`
	Alerts []Status `json:"alerts"`
}

type handlerBody struct {
	Rules       []ruleView      `json:"rules"`
	Transitions []Transition    `json:"transitions"`
	Health      EvaluatorHealth `json:"health"`
	// Unavailable says why the shared alerts are missing: Redis did not
	// answer. The Health alerts, this instance's own, are still there.
	Unavailable string `json:"unavailable,omitempty"`
}

// maxTransitions bounds the transitions one answer carries.
const maxTransitions = 1000

// Handler serves GET with every rule, with what its values measure
// (an SLO's target and latency threshold, a health rule's check), each
// of its alerts, inactive ones included, with state, value, threshold,
// window (an SLO's: the pair its value belongs to) and since, the last
// transitions (?transitions=N, default 20), and the evaluator's health;
// ?state=firing (or pending, resolved, inactive) keeps the alerts in
// that state. It reads the shared state
// from Redis, so any instance answers alike; Health alerts are this
// instance's own, from memory, and are served while Redis is down,
// with the reason in "unavailable". Bad parameters get a 400 with a
// JSON error.
func (e *Evaluator) Handler() http.Handler {
	return http.HandlerFunc(e.serve)
}

func (e *Evaluator) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed"})
		return
	}
	q := r.URL.Query()
	n := 20
	if v := q.Get("transitions"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 0 || n > maxTransitions {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "transitions must be an integer from 0 to 1000"})
			return
		}
	}
	want := State(q.Get("state"))
	switch want {
	case "", Inactive, Pending, Firing, Resolved:
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "state must be inactive, pending, firing or resolved"})
		return
	}
	for k := range q {
		if k != "transitions" && k != "state" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unknown parameter " + strconv.Quote(k)})
			return
		}
	}
	writeJSON(w, http.StatusOK, e.view(r, n, want))
}

// view is the handler's answer. Redis unreachable, it lists the Health
// alerts alone: they say so (PulseRedisDown), and must be seen.
func (e *Evaluator) view(r *http.Request, n int, want State) handlerBody {
	var unavailable string
	states, trans, err := e.st.snapshot(r.Context(), n)
	if err != nil {
		states, trans, unavailable = map[string]*Status{}, nil, "alert state unavailable: Redis did not answer"
	}
	e.mu.Lock()
	for k, s := range e.mem.local {
		c := *s
		states[k] = &c
	}
	trans = mergeTransitions(trans, e.mem.localLog, n)
	e.mu.Unlock()
	byRule := map[string][]Status{}
	for _, s := range states {
		if want == "" || s.State == want {
			byRule[s.Rule] = append(byRule[s.Rule], *s)
		}
	}
	var views []ruleView
	for _, rs := range [][]Rule{e.rules, e.local} {
		for _, rule := range rs {
			alerts := byRule[rule.Name]
			if alerts == nil {
				alerts = []Status{}
			}
			slices.SortFunc(alerts, func(a, b Status) int { return cmp.Compare(a.Key, b.Key) })
			views = append(views, ruleView{Name: rule.Name, Kind: rule.Kind, Series: rule.Series, Target: rule.Target,
				Threshold: rule.Threshold, Check: rule.Check, For: rule.For, Alerts: alerts})
		}
	}
	return handlerBody{Rules: views, Transitions: trans, Health: e.Health(), Unavailable: unavailable}
}

// mergeTransitions is the newest n of a and b, each newest first.
func mergeTransitions(a, b []Transition, n int) []Transition {
	out := make([]Transition, 0, min(n, len(a)+len(b)))
	for len(out) < n && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || (len(a) > 0 && !b[0].At.After(a[0].At)) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
