package timeseries

import (
	"time"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// Listing in known:. A member may be missing from the known set only if
// this recorder never listed it, or if its hash was empty before a write:
// the cleaner unlists only series whose hash it found empty. So a member
// is listed the first time this recorder writes it, and again whenever a
// flush script reports that a write created its hash; other flushes leave
// known: alone. On one server the flush script lists them itself, in the
// same call; on a cluster listLanded does, after the counts have landed,
// as the cleaner's second look expects (see package cleaner).

// isListed reports whether this recorder has listed member m. Called
// under r.mu.
func (r *Recorder) isListed(m string) bool {
	_, ok := r.listed[m]
	return ok
}

// noteListing records what an applied batch means for listing. On one
// server the script listed what needed it, unless known: refused. On a
// cluster the members never listed, those of created hashes, and all of
// a batch applied before (whose first reply, and what it created, were
// lost) wait for listLanded. Called under r.mu.
func (r *Recorder) noteListing(b *batch, sr scriptReply) {
	if !r.router.IsCluster() {
		if sr.known {
			return
		}
		for _, m := range b.Members {
			r.listed[m] = struct{}{}
		}
		return
	}
	for _, m := range b.Members {
		if sr.status == statusSeen || !r.isListed(m) {
			r.unlisted[m] = struct{}{}
		}
	}
	for _, i := range sr.created {
		r.unlisted[b.Members[i]] = struct{}{}
	}
}

// listLanded adds, on a cluster, the members noteListing set aside to the
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
			r.listed[m] = struct{}{}
		}
	}
	return firstErr
}
