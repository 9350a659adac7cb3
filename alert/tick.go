package alert

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// memory is the evaluator's view of the alert state. While it holds the
// lease (token > 0) its copy is the truth, since it alone writes; on
// taking the lease it reads Redis's.
type memory struct {
	token      int64
	states     map[string]*Status
	sent       map[string]Sent      // receiver + "\x00" + key
	inflight   map[string]bool      // a message queued or being sent
	lastResend map[string]time.Time // receiver + "\x00" + key
	local      map[string]*Status   // Health alerts, this instance's own
	localSent  map[string]Sent
	catalog    *catalog
	lastHealth *healthMark
	seen       map[string]timeseries.Heartbeat // recorder instance -> its latest heartbeat, while alive
	known      map[string]bool                 // every recorder instance heard of, until gone
	localLog   []Transition                    // the Health alerts' transitions, newest first
}

func newMemory() memory {
	return memory{states: map[string]*Status{}, sent: map[string]Sent{}, inflight: map[string]bool{},
		lastResend: map[string]time.Time{}, local: map[string]*Status{}, localSent: map[string]Sent{}, seen: map[string]timeseries.Heartbeat{},
		known: map[string]bool{}}
}

// evalStats is what Health tells of evaluations.
type evalStats struct {
	lastEval    time.Time
	lastErr     string
	dataMissing bool
	waiting     string // why resolves wait; "" when they do not
	evals       int64
}

// tick is one evaluation: local Health rules, then, if this instance
// holds the lease, the rules over series. It reports whether the next
// should come soon rather than in an Interval: the recorder has not
// flushed yet, so this one decided nothing.
func (e *Evaluator) tick(ctx context.Context) (soon bool) {
	now := e.cfg.Clock.Now()
	e.tickLocal(now)
	soon, err := e.tickShared(ctx, now)
	if err != nil {
		e.mu.Lock()
		e.stats.lastErr = err.Error()
		e.mu.Unlock()
	}
	return soon
}

// tickShared evaluates the series rules under the lease.
func (e *Evaluator) tickShared(ctx context.Context, now time.Time) (soon bool, err error) {
	token, err := e.lease(ctx)
	if err != nil || token == 0 {
		return false, err
	}
	missing, notYet := e.dataMissing(now)
	if notYet {
		return true, nil
	}
	var others instances
	if missing == "" {
		if others, err = e.othersMissing(ctx, now); err != nil {
			missing = err.Error() // unknown, so not known complete
		}
	}
	if missing != "" {
		e.hold(ctx, token, now)
		return false, errors.New("alert: data missing: " + missing)
	}
	// While another instance may hold hits, their backlog may land in
	// any bucket: none is settled, until one evaluation after.
	if others.newcomer || others.waiting != "" || e.waited || now.Sub(e.cache.filled) >= settledRefresh {
		e.cache.reset(now)
	}
	e.waited = others.waiting != ""
	e.settle = settleAfter(others.bound)
	// A resolve waits until an instance cut off after the last breached
	// evaluation would be past its stale bound, and so judged by mayHold.
	return false, e.evaluate(ctx, token, now, others.waiting, others.bound+e.cfg.Interval)
}

// evaluate reads and steps every state under token, stores what
// changed and queues the notifications due. While wait is not "",
// firing alerts do not resolve, nor until their breach has been over for
// quiet (Status.step).
func (e *Evaluator) evaluate(ctx context.Context, token int64, now time.Time, wait string, quiet time.Duration) error {
	obs, err := e.observe(ctx, now)
	if err != nil {
		e.hold(ctx, token, now)
		return err
	}
	e.mu.Lock()
	changed, log := e.applyLocked(obs, now, wait, quiet)
	e.mu.Unlock()
	if len(changed) > 0 {
		if err := e.st.write(ctx, token, changed, log); err != nil {
			e.mu.Lock()
			e.mem.token = 0 // read Redis's state again before going on
			e.mu.Unlock()
			return err
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stats.lastEval, e.stats.lastErr, e.stats.dataMissing, e.stats.waiting = now, "", false, wait
	e.stats.evals++
	e.notifyLocked(e.mem.states, e.mem.sent, token, now)
	return nil
}

// lease takes or renews the lease; on taking it, it loads the state.
// It returns 0 when another instance holds it.
func (e *Evaluator) lease(ctx context.Context) (int64, error) {
	token, err := e.st.acquire(ctx, e.cfg.Instance, e.cfg.LeaseTTL)
	e.mu.Lock()
	held := e.mem.token
	e.mu.Unlock()
	if err != nil || token == 0 {
		if held != 0 {
			e.cfg.Logger.Warn("pulse: alert: lease lost", "instance", e.cfg.Instance)
		}
		e.mu.Lock()
		e.mem.token = 0
		e.mu.Unlock()
		return 0, err
	}
	if token == held {
		return token, nil
	}
	states, sent, err := e.st.load(ctx)
	if err != nil {
		return 0, err
	}
	e.mu.Lock()
	// Messages still queued under an older token stay in flight until
	// their outbox drops them (the fence moved on); a later evaluation
	// queues them again if they are still due.
	e.mem.token, e.mem.states, e.mem.sent = token, states, sent
	e.mu.Unlock()
	e.cache.reset(e.cfg.Clock.Now()) // what it held is another holder's past
	e.cfg.Logger.Info("pulse: alert: evaluating", "instance", e.cfg.Instance, "token", token)
	return token, nil
}

// dataMissing says why Redis may lack hits the recorder holds: its
// latest flush failed, or none ended well lately; "" when none. notYet
// means the recorder has not tried a flush since the evaluator started,
// and is not late yet: no evaluation has had a chance to see one, and
// none is missing.
func (e *Evaluator) dataMissing(now time.Time) (missing string, notYet bool) {
	if e.cfg.Recorder == nil {
		return "", false
	}
	h := e.cfg.Recorder.Health()
	stale := e.staleAfter(h)
	switch {
	case !h.RedisUp:
		return "the recorder's latest flush failed", false
	case h.LastFlushOK.IsZero() && h.LastErrorAt.IsZero() && now.Sub(e.startedAt) <= stale:
		return "", true
	case h.LastFlushOK.IsZero():
		return fmt.Sprintf("the recorder has not flushed in the %s since the evaluator started", formatDuration(now.Sub(e.startedAt).Round(time.Second))), false
	case now.Sub(h.LastFlushOK) > stale:
		return fmt.Sprintf("the recorder's last good flush was %s ago", formatDuration(now.Sub(h.LastFlushOK).Round(time.Second))), false
	}
	return "", false
}

// staleAfter is Config.StaleAfter or its default for h's recorder.
func (e *Evaluator) staleAfter(h timeseries.Health) time.Duration {
	if e.cfg.StaleAfter > 0 {
		return e.cfg.StaleAfter
	}
	return max(3*h.FlushInterval, 3*time.Second)
}

// hold marks every state stale, nothing being decided from a gap, and
// stores the marks if Redis takes them, for the handler to show. What
// was decided before is still delivered, and a firing alert is still
// re-sent to Alertmanager, so that a long hold does not let it lapse
// there and fire anew when the hold ends.
func (e *Evaluator) hold(ctx context.Context, token int64, now time.Time) {
	e.cache.reset(now) // a backlog may land in buckets it took as settled
	e.mu.Lock()
	e.stats.dataMissing = true
	var marked []*Status
	for _, s := range e.mem.states {
		if !s.Stale {
			s.Stale = true
			c := *s
			marked = append(marked, &c)
		}
	}
	e.notifyLocked(e.mem.states, e.mem.sent, token, now)
	e.mu.Unlock()
	if len(marked) > 0 {
		_ = e.st.write(ctx, token, marked, nil) // best effort: Redis may be what is missing
	}
}

// valueRefresh is how often a state whose value alone changed is stored.
const valueRefresh = time.Minute

// applyLocked steps each state by its observation and returns the states
// to write and the transitions they made. A route gone from the known
// set has no observation: no requests, so not breached.
func (e *Evaluator) applyLocked(obs []observation, now time.Time, wait string, quiet time.Duration) ([]*Status, []Transition) {
	rules := make(map[string]*Rule, len(e.rules))
	for i := range e.rules {
		rules[e.rules[i].Name] = &e.rules[i]
	}
	seen := make(map[string]bool, len(obs))
	var changed []*Status
	var log []Transition
	apply := func(s *Status, o observation, r *Rule, quiet time.Duration) {
		from, before := s.State, *s
		moved := s.step(o, r, now, wait, quiet)
		if moved {
			log = append(log, Transition{At: now, Key: s.Key, Rule: s.Rule, Labels: s.Labels, From: from, To: s.State, Value: s.Value})
		}
		// A new value alone is stored at most once a minute: the values
		// of every route would otherwise be rewritten each evaluation.
		if moved || from == "" || before.Stale || before.ResolveHeld != s.ResolveHeld || (before.Value != s.Value && now.Sub(s.written) >= valueRefresh) {
			s.written = now
			changed = append(changed, s)
		}
	}
	for _, o := range obs {
		seen[o.Key] = true
		s := e.mem.states[o.Key]
		if s == nil {
			s = &Status{Key: o.Key}
			e.mem.states[o.Key] = s
		}
		apply(s, o, rules[o.Rule], quiet)
	}
	// An instance with no observation is not breached: its route left
	// the known set, or its rule or window pair is no longer configured.
	// No hits can bring it back, so its resolve does not wait for quiet.
	for key, s := range e.mem.states {
		if seen[key] || (s.State != Pending && s.State != Firing) {
			continue
		}
		r := rules[s.Rule]
		if r == nil {
			r = &Rule{}
		}
		apply(s, observation{Key: key, Rule: s.Rule, Series: s.Series, Labels: s.Labels, Annotations: s.Annotations,
			Threshold: s.Threshold, Window: s.Window.Std(), Short: s.ShortWindow.Std(), Unit: s.Unit}, r, 0)
	}
	return changed, log
}

// notifyLocked queues what each receiver is due: a transition not yet
// sent, or, for Alertmanager, a firing alert's periodic re-send.
func (e *Evaluator) notifyLocked(states map[string]*Status, sent map[string]Sent, token int64, now time.Time) {
	for _, o := range e.out {
		for key, s := range states {
			field := o.r.Name + "\x00" + key
			due := s.due(sent[field])
			resend := false
			if due == "" && o.r.Kind == ToAlertmanager && s.State == Firing && now.Sub(e.mem.lastResend[field]) >= e.cfg.ResendEvery {
				due, resend = Firing, true
			}
			if due == "" {
				continue
			}
			id := field + "\x00" + string(due) + "\x00" + s.ActiveAt.String()
			if e.mem.inflight[id] {
				continue
			}
			m := &message{status: *s, state: due, genURL: generatorURL(e.cfg.DashboardURL, s), extURL: e.cfg.DashboardURL,
				resend: resend, token: token, enqueue: time.Now(), receiver: o.r.Name}
			m.status.Labels = cloneLabels(s.Labels)
			if due == Firing {
				m.endsAt = now.Add(4 * e.cfg.ResendEvery)
			}
			if o.offer(m) {
				e.mem.inflight[id] = true
				e.mem.lastResend[field] = now
			}
		}
	}
}

// delivered is the outboxes' report on a message: it records a delivered
// transition in Redis under the token it was decided with, so the next
// holder does not send it again.
func (e *Evaluator) delivered(m *message, ok bool) {
	o := e.outboxOf(m)
	field := o + "\x00" + m.status.Key
	id := field + "\x00" + string(m.state) + "\x00" + m.status.ActiveAt.String()
	mark := Sent{State: m.state, ActiveAt: m.status.ActiveAt, At: e.cfg.Clock.Now()}
	if ok && !m.resend {
		if m.token == 0 {
			e.mu.Lock()
			e.mem.localSent[field] = mark
			e.mu.Unlock()
		} else {
			// Remembered here even if Redis does not take it, so this
			// holder does not send it again; a new holder might.
			e.mu.Lock()
			if e.mem.token == m.token {
				e.mem.sent[field] = mark
			}
			e.mu.Unlock()
			if err := e.st.mark(e.bg, m.token, field, mark); err != nil {
				e.cfg.Logger.Warn("pulse: alert: could not record a delivered notification", "receiver", o, "err", err)
			}
		}
	}
	switch {
	case m.superseded:
		e.cfg.Logger.Info("pulse: alert: notification left to the new lease holder", "receiver", o, "alert", m.status.Labels["alertname"], "state", m.state)
	case !ok:
		e.cfg.Logger.Warn("pulse: alert: notification not delivered", "receiver", o, "alert", m.status.Labels["alertname"], "state", m.state)
	}
	e.mu.Lock()
	delete(e.mem.inflight, id)
	e.mu.Unlock()
}

// fresh tells an outbox whether m's fencing token is still the current
// one, asking Redis: this instance's own view of its lease may be a lease
// that already lapsed.
func (e *Evaluator) fresh(ctx context.Context, m *message) (bool, error) {
	return e.st.current(ctx, m.token)
}

// outboxOf names the receiver m was queued for.
func (e *Evaluator) outboxOf(m *message) string { return m.receiver }

func cloneLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
