package entity

import (
	"context"
	"fmt"

	"golang.org/x/sync/semaphore"
)

// outageLock is a read-write lock whose waits end with the waiter's
// context. Writes that may record stale entries share it; the probe takes
// it whole for its last sweep of SQL, which a slow database stretches, so
// a write must be able to give up at its deadline rather than wait the
// sweep out. Like a sync.RWMutex, a waiting probe holds back new sharers.
type outageLock struct{ sem *semaphore.Weighted }

// outageShares is the weight of the whole lock: more sharers than could
// ever wait at once.
const outageShares = 1 << 40

func newOutageLock() outageLock { return outageLock{sem: semaphore.NewWeighted(outageShares)} }

// share takes a share of the lock, or fails with ErrUnavailable when ctx
// ends first.
func (l outageLock) share(ctx context.Context) error {
	if err := l.sem.Acquire(ctx, 1); err != nil {
		return fmt.Errorf("%w: waiting for the cache to come back: %w", ErrUnavailable, err)
	}
	return nil
}

func (l outageLock) unshare() { l.sem.Release(1) }

// take takes the whole lock, or fails when ctx ends first.
func (l outageLock) take(ctx context.Context) error { return l.sem.Acquire(ctx, outageShares) }

func (l outageLock) give() { l.sem.Release(outageShares) }
