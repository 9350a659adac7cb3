package redisconn

import (
	"context"
	"time"
)

// Timeout is how long a call made under ctx may take: def, or what is left
// of ctx's deadline when that comes sooner. def <= 0 sets no bound of the
// caller's own: the call then has ctx's deadline alone, and Timeout
// returns 0 (no bound at all) when ctx has none.
//
// Once ctx's deadline has passed Timeout returns context.DeadlineExceeded
// rather than a timeout too short to be of use. It looks at the deadline
// only: whether ctx was canceled is for the caller to check.
func Timeout(ctx context.Context, def time.Duration) (time.Duration, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		return max(def, 0), nil
	}
	left := time.Until(dl)
	switch {
	case left <= 0:
		return 0, context.DeadlineExceeded
	case def > 0 && def < left:
		return def, nil
	}
	return left, nil
}

// defaultReadTimeout bounds a read whose context has no deadline.
const defaultReadTimeout = 5 * time.Second

// ReadTimeout is what is left of ctx's deadline, or 5 s when it has none:
// the bound of one read.
func ReadTimeout(ctx context.Context) time.Duration {
	t, err := Timeout(ctx, 0)
	switch {
	case err != nil:
		return time.Millisecond // past the deadline: fail fast
	case t == 0:
		return defaultReadTimeout // no deadline
	}
	return t
}
