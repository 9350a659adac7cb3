package alert

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries"
)

// defaultGoneAfter is how long an instance may be silent before it is
// taken as gone: as long as a recorder keeps the hits it cannot write
// (timeseries.Config.MaxPendingAge's default), so that a partition within
// it holds the alerts until the instance's backlog lands.
const defaultGoneAfter = 15 * time.Minute

// instances is what the recorders' heartbeats say of the instances.
type instances struct {
	missing  string        // why some may hold hits Redis lacks; "" for none
	bound    time.Duration // the largest stale bound of the live ones
	newcomer bool          // one this evaluator had not heard of
}

// othersMissing reads every recorder's heartbeat
// (timeseries.Store.Heartbeats) and says which instances may hold hits
// Redis lacks: an instance heard from within GoneAfter whose last good
// flush is older than its stale bound, or whose heartbeat vanished from
// Redis (evicted, deleted) while this evaluator knew it alive. An
// instance silent for longer than GoneAfter is gone: it is forgotten,
// its heartbeat deleted, and it holds nothing.
func (e *Evaluator) othersMissing(ctx context.Context, now time.Time) (instances, error) {
	hbs, err := e.store.Heartbeats(ctx)
	if err != nil {
		return instances{}, err
	}
	e.mu.Lock()
	in, stale, gone := e.judgeLocked(hbs, now)
	e.mu.Unlock()
	if len(gone) > 0 {
		e.forget(ctx, gone)
	}
	sort.Strings(stale)
	in.missing = strings.Join(stale, "; ")
	return in, nil
}

// judgeLocked sorts the instances of hbs and those this evaluator knew
// alive into stale ones (why, for each) and gone ones (their ids), and
// keeps when each live one was last heard of.
func (e *Evaluator) judgeLocked(hbs []timeseries.Heartbeat, now time.Time) (in instances, stale, gone []string) {
	present := map[string]bool{}
	in.bound = e.staleBound(time.Second)
	for _, hb := range hbs {
		present[hb.Instance] = true
		if !e.mem.known[hb.Instance] {
			e.mem.known[hb.Instance], in.newcomer = true, true
		}
		switch {
		case now.Sub(hb.At) > e.cfg.GoneAfter:
			gone = append(gone, hb.Instance)
			delete(e.mem.seen, hb.Instance)
			delete(e.mem.known, hb.Instance)
		case hb.Closed:
			delete(e.mem.seen, hb.Instance)
		default:
			e.mem.seen[hb.Instance] = hb.At
			bound := e.staleBound(hb.FlushInterval)
			in.bound = max(in.bound, bound)
			if now.Sub(hb.LastFlushOK) > bound {
				stale = append(stale, fmt.Sprintf("instance %s: its last good flush was %v ago, with %d hits pending when it last reported %v ago",
					instanceName(hb), now.Sub(hb.LastFlushOK).Round(time.Second), hb.PendingHits, now.Sub(hb.At).Round(time.Second)))
			}
		}
	}
	for id, at := range e.mem.seen {
		switch {
		case present[id]:
		case now.Sub(at) > e.cfg.GoneAfter:
			delete(e.mem.seen, id)
		default:
			stale = append(stale, fmt.Sprintf("instance %s: its heartbeat is gone from Redis, last heard of %v ago", id, now.Sub(at).Round(time.Second)))
		}
	}
	return in, stale, gone
}

// staleBound is how old an instance's last good flush may be, for a
// recorder flushing every interval: Config.StaleAfter, or 3 intervals,
// at least 3 s.
func (e *Evaluator) staleBound(interval time.Duration) time.Duration {
	if e.cfg.StaleAfter > 0 {
		return e.cfg.StaleAfter
	}
	return max(3*interval, 3*time.Second)
}

// forget deletes the heartbeats of gone instances, best effort: one
// that comes back publishes again.
func (e *Evaluator) forget(ctx context.Context, ids []string) {
	key := e.schema.HeartbeatsKey()
	args := []any{key}
	for _, id := range ids {
		args = append(args, id)
	}
	e.st.r.DoContext(ctx, []redisconn.Cmd{{Key: key, Name: "HDEL", Args: args}}, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)})
}

// instanceName names a recorder for people: its host and process, and
// its id.
func instanceName(hb timeseries.Heartbeat) string {
	if hb.Host == "" {
		return hb.Instance
	}
	return fmt.Sprintf("%s (pid %d, recorder %s)", hb.Host, hb.PID, hb.Instance)
}
