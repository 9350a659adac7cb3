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
// forgotten: as long as a recorder keeps the hits it cannot write
// (timeseries.Config.MaxPendingAge's default).
const defaultGoneAfter = 15 * time.Minute

// rejoinGrace is how long past its stale bound a silent instance is
// taken as possibly cut off whatever it last reported: a recorder that
// gets Redis back flushes within its retry backoff, at most 30 s. Past
// it, a silent instance holds hits only if it said so.
const rejoinGrace = 30 * time.Second

// instances is what the recorders' heartbeats say of the instances.
type instances struct {
	missing  string        // why the heartbeats could not be judged; "" when they were
	waiting  string        // why resolves wait: instances that may hold hits Redis lacks
	bound    time.Duration // the largest stale bound of the live ones
	newcomer bool          // one this evaluator had not heard of
}

// othersMissing reads every recorder's heartbeat
// (timeseries.Store.Heartbeats) and says which instances may hold hits
// Redis lacks (see mayHold), including one whose heartbeat vanished from
// Redis (evicted, deleted) while this evaluator knew it, judged by the
// last heartbeat it read. An instance silent for longer than GoneAfter
// is forgotten, its heartbeat deleted.
func (e *Evaluator) othersMissing(ctx context.Context, now time.Time) (instances, error) {
	hbs, err := e.store.Heartbeats(ctx)
	if err != nil {
		return instances{}, err
	}
	e.mu.Lock()
	in, waiting, gone := e.judgeLocked(hbs, now)
	e.mu.Unlock()
	if len(gone) > 0 {
		e.forget(ctx, gone)
	}
	sort.Strings(waiting)
	in.waiting = strings.Join(waiting, "; ")
	return in, nil
}

// judgeLocked sorts the instances of hbs and those this evaluator knew
// into those that may hold hits (why, for each) and gone ones (their
// ids), and keeps the latest heartbeat of each live one.
func (e *Evaluator) judgeLocked(hbs []timeseries.Heartbeat, now time.Time) (in instances, waiting, gone []string) {
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
			e.mem.seen[hb.Instance] = hb
			in.bound = max(in.bound, e.staleBound(hb.FlushInterval))
			if why := e.mayHold(hb, now); why != "" {
				waiting = append(waiting, fmt.Sprintf("instance %s: %s", instanceName(hb), why))
			}
		}
	}
	for id, hb := range e.mem.seen {
		switch {
		case present[id]:
		case now.Sub(hb.At) > e.cfg.GoneAfter:
			delete(e.mem.seen, id)
		default:
			if why := e.mayHold(hb, now); why != "" {
				waiting = append(waiting, fmt.Sprintf("instance %s: its heartbeat is gone from Redis; %s", id, why))
			}
		}
	}
	return in, waiting, gone
}

// mayHold says why the instance of hb may hold hits Redis lacks, or ""
// when it holds none: its last good flush is within its stale bound, or
// it has been silent for longer than rejoinGrace past that bound and
// either reported no hits pending (it stopped: a crash, a kill) or its
// last good flush is older than its MaxPendingAge (it dropped them).
// One silent within the grace may be cut off and recording still; one
// that reported hits pending keeps them until its MaxPendingAge.
func (e *Evaluator) mayHold(hb timeseries.Heartbeat, now time.Time) string {
	bound := e.staleBound(hb.FlushInterval)
	flushed, heard := now.Sub(hb.LastFlushOK), now.Sub(hb.At)
	keep := hb.MaxPendingAge
	if keep <= 0 {
		keep = e.cfg.GoneAfter
	}
	switch {
	case flushed <= bound:
		return ""
	case heard <= bound+rejoinGrace:
		return fmt.Sprintf("its last good flush was %s ago, and it was last heard of %s ago, with %d hits pending",
			formatDuration(flushed.Round(time.Second)), formatDuration(heard.Round(time.Second)), hb.PendingHits)
	case hb.PendingHits > 0 && flushed <= keep:
		return fmt.Sprintf("it reported %d hits pending %s ago, which it keeps until %s after its last good flush, %s ago",
			hb.PendingHits, formatDuration(heard.Round(time.Second)), formatDuration(keep), formatDuration(flushed.Round(time.Second)))
	}
	return ""
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
