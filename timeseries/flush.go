package timeseries

import (
	"context"
	"fmt"
	"time"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// flush writes what is pending, in rounds, until nothing is left, a round
// fails or ctx ends. Unless force, it does nothing during a backoff.
func (r *Recorder) flush(ctx context.Context, force bool) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	if !force && r.backingOff() {
		if r.visitors != nil {
			r.visitors.drainAged() // the stripes stay small, and old ids age out
		}
		return nil
	}
	var visitorsErr error
	if r.visitors != nil {
		visitorsErr = r.visitors.flush(ctx)
	}
	// What the request path holds is drained once: hits recorded while
	// the rounds run wait for the next flush, so a flush under steady
	// traffic ends, and a round costs what it takes, not the number of
	// series.
	r.mu.Lock()
	r.drainLocked()
	r.mu.Unlock()
	wrote := false
	for stalls := 0; stalls < maxStalls; {
		out, err := r.round(ctx)
		wrote = wrote || out.wrote
		if err != nil {
			r.failed(err)
			return err
		}
		if !out.more {
			break
		}
		if !out.progressed {
			stalls++
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if visitorsErr != nil {
		r.failed(visitorsErr)
		return visitorsErr
	}
	r.succeeded(wrote)
	return nil
}

// backingOff reports whether a failure's backoff still holds flushes
// back; meanwhile the hits still age out.
func (r *Recorder) backingOff() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	if !now.Before(r.status.retryAt) {
		return false
	}
	r.drainLocked()
	r.ledger.age(now.Unix())
	return true
}

// maxStalls bounds the rounds of one flush that make no progress: that
// take nothing new from pending (only resending batches in flight, or
// waiting on a busy marker), or have a batch fenced and given back. The
// others need no bound: they shrink pending, which a flush drains once,
// so catching up on a long outage, one round per maxBatchDeltas deltas
// of a group, always ends.
const maxStalls = 64

// roundOutcome is what one round did: more is left to send, something
// was written, and pending shrank (see maxStalls).
type roundOutcome struct{ more, wrote, progressed bool }

// round sends one batch per marker at most, then lists the keys that
// landed (on a cluster, where their listing is a command of its own).
func (r *Recorder) round(ctx context.Context) (roundOutcome, error) {
	r.sender.refreshPlan()
	r.mu.Lock()
	batches, leftover, took, take := r.ledger.takeRound()
	r.mu.Unlock()
	var out roundOutcome

	timeout, err := redisconn.Timeout(ctx, r.sender.timeout)
	if err != nil {
		out.more = true
		return out, fmt.Errorf("timeseries: flush: %w", err)
	}
	wrote, again, firstErr := r.sender.send(batches, timeout)
	out.more, out.wrote, out.progressed = leftover || again, wrote, took && !again
	if err := r.sender.listLanded(timeout); err != nil && firstErr == nil {
		firstErr = err
	}
	if firstErr != nil {
		return out, fmt.Errorf("timeseries: flush: %w", firstErr)
	}
	if !out.more {
		r.mu.Lock()
		r.ledger.wrote(take) // all pending before this take is in Redis
		r.mu.Unlock()
	}
	return out, nil
}

// untilNextSecond is how long from t to the next whole second.
func untilNextSecond(t time.Time) time.Duration {
	return t.Truncate(time.Second).Add(time.Second).Sub(t)
}

// start starts the background flusher. Its ticker is made here, not on
// the flusher's goroutine, so that a test's clock can fire it at once.
func (r *Recorder) start() {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	flushes := r.timers.newTicker(r.interval)
	var second timer
	if r.counts.coarse {
		now := r.clock.Now()
		r.counts.now.Store(now.Unix())
		second = r.timers.newTimer(untilNextSecond(now))
	}
	go r.loop(ctx, flushes, second)
}

// loop runs the flushes on each tick and, with a coarse clock, keeps
// nowSec current.
func (r *Recorder) loop(ctx context.Context, flushes ticker, second timer) {
	defer close(r.done)
	defer flushes.Stop()
	var secondC <-chan time.Time
	if second != nil {
		defer second.Stop()
		secondC = second.C()
	}
	flushDone := make(chan struct{}, 1)
	flushing := false
	for {
		select {
		case <-ctx.Done():
			if flushing {
				<-flushDone
			}
			return
		case now := <-secondC:
			r.counts.now.Store(r.clock.Now().Unix())
			second.Reset(untilNextSecond(now))
		case <-flushes.C():
			// Flush on its own goroutine so a slow Redis cannot stop the
			// clock; at most one runs at a time.
			if !flushing {
				flushing = true
				go func() {
					// Not cancelled by Close: a flush under way finishes
					// (within FlushTimeout) rather than leave a batch whose
					// fate Redis alone knows.
					_ = r.flush(context.WithoutCancel(ctx), false)
					_ = r.beat(context.WithoutCancel(ctx), false)
					flushDone <- struct{}{}
				}()
			}
		case <-flushDone:
			flushing = false
		}
	}
}
