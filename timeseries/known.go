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
// under s.mu.
func (s *sender) isListed(m string) bool {
	_, ok := s.listed[m]
	return ok
}

// noteListing records what an applied batch means for listing. On one
// server the script listed what needed it, unless known: refused. On a
// cluster the members never listed, those of created hashes, and all of
// a batch applied before (whose first reply, and what it created, were
// lost) wait for listLanded. Called under s.mu.
func (s *sender) noteListing(b *batch, sr scriptReply) {
	if !s.router.IsCluster() {
		if sr.known {
			return
		}
		for _, m := range b.Members {
			s.listed[m] = struct{}{}
		}
		return
	}
	for _, m := range b.Members {
		if sr.status == statusSeen || !s.isListed(m) {
			s.unlisted[m] = struct{}{}
		}
	}
	for _, i := range sr.created {
		s.unlisted[b.Members[i]] = struct{}{}
	}
}

// listLanded adds, on a cluster, the members noteListing set aside to the
// known set: after their hashes, so that a cleaner that finds a hash
// empty and unlists it can tell by looking again (see package cleaner).
func (s *sender) listLanded(timeout time.Duration) error {
	s.mu.Lock()
	if len(s.unlisted) == 0 {
		s.mu.Unlock()
		return nil
	}
	members := make([]string, 0, len(s.unlisted))
	for m := range s.unlisted {
		members = append(members, m)
	}
	s.mu.Unlock()
	known := s.schema.KnownKey()
	var cmds []redisconn.Cmd
	for i := 0; i < len(members); i += 500 {
		args := []any{known}
		for _, m := range members[i:min(i+500, len(members))] {
			args = append(args, 0, m)
		}
		cmds = append(cmds, redisconn.Cmd{Key: known, Name: "ZADD", Args: args})
	}
	replies := s.router.Do(cmds, redisconn.Options{Timeout: timeout, WaitReplicas: s.waitReplicas})
	var firstErr error
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, rep := range replies {
		chunk := members[i*500 : min(i*500+500, len(members))]
		switch redisconn.Classify(rep.Err) {
		case redisconn.OK:
		case redisconn.KeyPermanent:
			s.status.refused(known)
		default:
			if firstErr == nil {
				firstErr = rep.Err
			}
			continue
		}
		for _, m := range chunk {
			delete(s.unlisted, m)
			s.listed[m] = struct{}{}
		}
	}
	return firstErr
}
