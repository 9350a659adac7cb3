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
	wrote := false
	for range maxRounds {
		more, did, err := r.round(ctx)
		wrote = wrote || did
		if err != nil {
			r.failed(err)
			return err
		}
		if !more {
			break
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

// maxRounds bounds one flush; catching up on a long outage takes one
// round per maxBatchDeltas deltas of a group.
const maxRounds = 64

// round sends one batch per marker at most, then lists the keys that
// landed (on a cluster, where their listing is a command of its own). It
// reports whether more is left to send and whether anything was written.
func (r *Recorder) round(ctx context.Context) (more, wrote bool, err error) {
	r.sender.refreshPlan()
	r.mu.Lock()
	r.drainLocked()
	batches, leftover, take := r.ledger.takeRound()
	r.mu.Unlock()

	timeout, err := redisconn.Timeout(ctx, r.sender.timeout)
	if err != nil {
		return true, false, fmt.Errorf("timeseries: flush: %w", err)
	}
	wrote, again, firstErr := r.sender.send(batches, timeout)
	leftover = leftover || again
	if err := r.sender.listLanded(timeout); err != nil && firstErr == nil {
		firstErr = err
	}
	if firstErr != nil {
		return leftover, wrote, fmt.Errorf("timeseries: flush: %w", firstErr)
	}
	// Another round only for what this one had to leave: hits recorded
	// meanwhile wait for the next flush, so a flush under steady traffic
	// ends.
	if !leftover {
		r.mu.Lock()
		r.ledger.wrote(take) // all pending before this take is in Redis
		r.mu.Unlock()
	}
	return leftover, wrote, nil
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
