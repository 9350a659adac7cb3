package timeseries

import (
	"time"

	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// markerFor is the idempotence key of one flush group.
func (r *Recorder) markerFor(group int) string {
	base := r.schema.Prefix + "pulse:flushed:" + r.id
	if !r.router.IsCluster() {
		return base
	}
	m := base + ":{" + redisconn.SlotTag(group) + "}"
	if redisc.Slot(m) != group {
		// The prefix carries a hash tag of its own, so every key of the
		// schema, this one too, is in the prefix's slot.
		return base
	}
	return m
}

// groupOf is the flush group of a count key: its slot on a cluster, 0 on
// one server.
func (r *Recorder) groupOf(key string) int {
	if r.router.IsCluster() {
		return redisc.Slot(key)
	}
	return 0
}

// listLanded adds, on a cluster, the members whose counts landed to the
// known set: after their hashes, so that a cleaner that finds a hash
// empty and unlists it can tell by looking again (see package cleaner).
func (r *Recorder) listLanded(timeout time.Duration) error {
	r.mu.Lock()
	if len(r.unlisted) == 0 {
		r.mu.Unlock()
		return nil
	}
	members := make([]string, 0, len(r.unlisted))
	for m := range r.unlisted {
		members = append(members, m)
	}
	r.mu.Unlock()
	known := r.schema.KnownKey()
	var cmds []redisconn.Cmd
	for i := 0; i < len(members); i += 500 {
		args := []any{known}
		for _, m := range members[i:min(i+500, len(members))] {
			args = append(args, 0, m)
		}
		cmds = append(cmds, redisconn.Cmd{Key: known, Name: "ZADD", Args: args})
	}
	replies := r.router.Do(cmds, redisconn.Options{Timeout: timeout, WaitReplicas: r.waitReplicas})
	var firstErr error
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, rep := range replies {
		chunk := members[i*500 : min(i*500+500, len(members))]
		switch redisconn.Classify(rep.Err) {
		case redisconn.OK:
		case redisconn.KeyPermanent:
			r.status.refused(known)
		default:
			if firstErr == nil {
				firstErr = rep.Err
			}
			continue
		}
		for _, m := range chunk {
			delete(r.unlisted, m)
		}
	}
	return firstErr
}
