package dashboard

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/pulse-dev/pulse/forecast/fromstore"
)

// reader runs the store reads of the dashboard's requests: at most
// ConcurrentReads at once, and the identical reads of requests polling
// the same view joined into one.
type reader struct {
	store      storeView
	timeout    time.Duration // Config.Timeout, for reads no request owns
	maxBuckets int
	slots      chan struct{}
	// windows joins identical overview reads under way into one; scans,
	// identical scans for anomalies.
	windows, scans singleflight.Group
	// memos keep the default window of each precision between reads.
	memosMu sync.Mutex
	memos   map[int]*windowMemo
	// scanner reads the 1 h and 1 d series of the scans once per closed
	// bucket of theirs.
	scanner *fromstore.Scanner
}

func newReader(cfg Config, store storeView) *reader {
	return &reader{store: store, timeout: cfg.Timeout, maxBuckets: cfg.MaxBuckets, slots: make(chan struct{}, cfg.ConcurrentReads),
		scanner: &fromstore.Scanner{Store: cfg.Store, Settle: max(fromstore.DefaultSettle, 3*cfg.FlushInterval), Keep: true}}
}

// acquire waits for a turn among ConcurrentReads, within ctx. The caller
// calls the returned release.
func (rd *reader) acquire(ctx context.Context) (release func(), err error) {
	select {
	case rd.slots <- struct{}{}:
		return func() { <-rd.slots }, nil
	case <-ctx.Done():
		return nil, errBusy
	}
}

// errBusy is a read that found no turn within the request's timeout.
var errBusy = errors.New("dashboard: too many reads at once")

// detached is the context and read slot of a read other requests share:
// the client that started it leaving must not cut it short, so it runs
// under the server's own bound. done ends it.
func (rd *reader) detached(ctx context.Context) (context.Context, func(), error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rd.timeout)
	release, err := rd.acquire(ctx)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return ctx, func() { release(); cancel() }, nil
}
