package alert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// outbox delivers one receiver's messages in order, from a bounded
// queue, retrying with backoff; the evaluator only ever offers to it, so
// a dead or slow receiver never holds an evaluation up.
type outbox struct {
	r        Receiver
	endpoint string
	client   *http.Client
	q        chan *message
	done     func(m *message, ok bool) // after success, or after giving up
	// fresh says whether m may still be sent: false once another
	// instance took the lease m was decided under.
	fresh    func(ctx context.Context, m *message) (bool, error)
	min, max time.Duration // backoff bounds
	giveUp   time.Duration // after this long since enqueue

	delivered, retries, undelivered atomic.Int64
	mu                              sync.Mutex
	lastErr                         string
}

func newOutbox(r Receiver, queue int, min, max, giveUp time.Duration, done func(*message, bool), fresh func(context.Context, *message) (bool, error)) (*outbox, error) {
	ep, err := r.endpoint()
	if err != nil {
		return nil, err
	}
	if r.Timeout <= 0 {
		r.Timeout = 5 * time.Second
	}
	client := &http.Client{
		Timeout: r.Timeout,
		// A redirect would carry the request elsewhere and its error the
		// URL: a receiver answers where it is asked.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &outbox{r: r, endpoint: ep, client: client, q: make(chan *message, queue), done: done, fresh: fresh, min: min, max: max, giveUp: giveUp}, nil
}

// offer queues m without waiting; a full queue counts it undelivered.
func (o *outbox) offer(m *message) bool {
	select {
	case o.q <- m:
		return true
	default:
		o.undelivered.Add(1)
		o.setErr(errors.New("queue full"))
		return false
	}
}

// run delivers until ctx ends.
func (o *outbox) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-o.q:
			o.deliver(ctx, m)
		}
	}
}

// deliver tries m until it is taken, refused for good, too old, or ctx
// ends.
func (o *outbox) deliver(ctx context.Context, m *message) {
	wait := o.min
	for {
		err := o.attempt(ctx, m)
		if errors.Is(err, errSuperseded) {
			m.superseded = true
			o.done(m, false)
			return
		}
		if err == nil {
			o.delivered.Add(1)
			o.done(m, true)
			return
		}
		o.setErr(err)
		var perm permanentError
		if errors.As(err, &perm) || ctx.Err() != nil || time.Since(m.enqueue)+wait > o.giveUp {
			o.undelivered.Add(1)
			o.done(m, false)
			return
		}
		o.retries.Add(1)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			o.undelivered.Add(1)
			o.done(m, false)
			return
		case <-t.C:
		}
		wait = min(2*wait, o.max)
	}
}

// errSuperseded means the lease a message was decided under has passed
// to another instance, which decides and sends on its own.
var errSuperseded = errors.New("superseded by a newer lease holder")

// attempt checks, just before each post, that m's lease is still the
// current one: a message queued before a handover would otherwise go
// out once from here and once from the new holder. A Redis error leaves
// the question open, so the attempt fails and is retried.
func (o *outbox) attempt(ctx context.Context, m *message) error {
	if m.token != 0 && o.fresh != nil {
		ok, err := o.fresh(ctx, m)
		if err != nil {
			return err
		}
		if !ok {
			return errSuperseded
		}
	}
	return o.post(ctx, m)
}

// permanentError is a refusal a retry will not change (a 4xx other than
// 408 and 429).
type permanentError struct{ code int }

func (e permanentError) Error() string { return fmt.Sprintf("refused with HTTP %d", e.code) }

func (o *outbox) post(ctx context.Context, m *message) error {
	body, err := m.body(o.r)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return errors.New("cannot make the request")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := o.client.Do(req)
	if err != nil {
		return scrub(err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return nil
	case c >= 400 && c < 500 && c != http.StatusRequestTimeout && c != http.StatusTooManyRequests:
		return permanentError{c}
	default:
		return fmt.Errorf("HTTP %d", c)
	}
}

// scrub drops the URL an *url.Error carries: it may hold a token.
func scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return errors.New(ue.Op + ": timeout")
		}
		return errors.New(ue.Op + ": " + scrubText(ue.Err))
	}
	return err
}

// scrubText is the message of a transport error, which names addresses
// but not URLs.
func scrubText(err error) string {
	if err == nil {
		return "failed"
	}
	return err.Error()
}

func (o *outbox) setErr(err error) {
	o.mu.Lock()
	o.lastErr = fmt.Sprintf("receiver %q: %v", o.r.Name, err)
	o.mu.Unlock()
}

// ReceiverHealth is what one receiver's delivery has done.
type ReceiverHealth struct {
	Name        string `json:"name"`
	Queued      int    `json:"queued"`
	Delivered   int64  `json:"delivered"`
	Retries     int64  `json:"retries"`
	Undelivered int64  `json:"undelivered"`
	LastError   string `json:"last_error,omitempty"`
}

func (o *outbox) health() ReceiverHealth {
	o.mu.Lock()
	defer o.mu.Unlock()
	return ReceiverHealth{Name: o.r.Name, Queued: len(o.q), Delivered: o.delivered.Load(), Retries: o.retries.Load(), Undelivered: o.undelivered.Load(), LastError: o.lastErr}
}
