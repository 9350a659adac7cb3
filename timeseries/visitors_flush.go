package timeseries

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries/internal/visitors"
)

// maxPFADD bounds the ids of one PFADD, so a key pending since a long
// outage does not make one huge command.
const maxPFADD = 4096

// flush keeps the salts current, drains the visitors recorded and sends
// every pending key. The caller holds flushMu. A salt that cannot be
// fetched is reported but does not fail the flush: the hits and the ids
// already hashed do not depend on it, and a closing Recorder, which needs
// no salt, must not wait on it.
func (u *visitorState) flush(ctx context.Context) error {
	u.drainAged()
	timeout, err := redisconn.Timeout(ctx, u.env.timeout)
	if err != nil {
		return fmt.Errorf("timeseries: visitors: %w", err)
	}
	if !u.env.closed() {
		if err := u.keepSalts(u.env.clock.Now().Unix(), timeout); err != nil {
			u.env.onError(fmt.Errorf("timeseries: visitors: %w", err))
		}
	}
	return u.send(timeout)
}

// keepSalts fetches the salts of today and tomorrow when missing, and
// offers them again every saltRecheck seconds.
func (u *visitorState) keepSalts(now int64, timeout time.Duration) error {
	recheck := now-u.lastCheck >= saltRecheck
	offers, err := u.book.Due(now, recheck)
	if err != nil {
		return err
	}
	for i := range offers {
		offers[i].Salt, offers[i].Err = u.fetchSalt(offers[i].Day, offers[i].Salt, timeout)
	}
	err = u.book.Keep(now, offers)
	if recheck && err == nil {
		u.lastCheck = now
	}
	return err
}

// fetchSalt sets the day's salt to proposal unless it has one, and
// returns the one it has: SET NX GET, so every instance ends up with the
// first one set. The key expires Grace after its day.
func (u *visitorState) fetchSalt(day int64, proposal visitors.Salt, timeout time.Duration) (visitors.Salt, error) {
	key := visitors.SaltKey(u.env.schema.Prefix, day)
	cmd := redisconn.Cmd{Key: key, Name: "SET", Args: []any{key, proposal.Encode(), "NX", "GET", "EXAT", day + visitors.Day + visitors.Grace}}
	rep := u.env.router.Do([]redisconn.Cmd{cmd}, redisconn.Options{Timeout: timeout})[0]
	if rep.Err != nil {
		return visitors.Salt{}, fmt.Errorf("salt of day %d: %w", day, rep.Err)
	}
	switch v := rep.Value.(type) {
	case nil:
		return proposal, nil
	case []byte:
		return visitors.DecodeSalt(v)
	}
	return visitors.Salt{}, errors.New("salt: unexpected reply")
}

// visitorSend is one key's commands in a send.
type visitorSend struct {
	name  string
	first int // index of its first command
	n     int
}

// send sends every pending key, one pipeline per server: PFADD
// with its ids (in chunks of maxPFADD) and EXPIREAT. A key whose every
// command Redis took leaves pending; a key Redis refuses for its type is
// dropped and reported; any other error keeps it for the next flush.
func (u *visitorState) send(timeout time.Duration) error {
	u.mu.Lock()
	var cmds []redisconn.Cmd
	var sends []visitorSend
	for name, k := range u.pending {
		s := visitorSend{name: name, first: len(cmds)}
		cmds = appendPFADD(cmds, name, k)
		s.n = len(cmds) - s.first
		sends = append(sends, s)
	}
	u.mu.Unlock()
	if len(cmds) == 0 {
		return nil
	}
	replies := u.env.router.Do(cmds, redisconn.Options{Timeout: timeout, WaitReplicas: u.env.waitReplicas})
	var firstErr error
	for _, s := range sends {
		err := firstError(replies[s.first : s.first+s.n])
		switch redisconn.Classify(err) {
		case redisconn.OK:
			u.settle(s.name, false)
		case redisconn.KeyPermanent:
			u.settle(s.name, true)
			u.env.refused(s.name)
		default:
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if firstErr != nil {
		return fmt.Errorf("timeseries: visitors: %w", firstErr)
	}
	u.sentAll()
	return nil
}

// appendPFADD appends the commands of one key. Each id is 8 bytes of one
// shared buffer: Redis hashes elements itself, so the shortest form is
// the best.
func appendPFADD(cmds []redisconn.Cmd, name string, k *visitorKey) []redisconn.Cmd {
	buf := make([]byte, 0, 8*len(k.ids))
	args := []any{name}
	for id := range k.ids {
		buf = binary.BigEndian.AppendUint64(buf, id)
		args = append(args, buf[len(buf)-8:])
		if len(args) > maxPFADD {
			cmds = append(cmds, redisconn.Cmd{Key: name, Name: "PFADD", Args: args})
			args = []any{name}
		}
	}
	if len(args) > 1 {
		cmds = append(cmds, redisconn.Cmd{Key: name, Name: "PFADD", Args: args})
	}
	return append(cmds, redisconn.Cmd{Key: name, Name: "EXPIREAT", Args: []any{name, k.expire}})
}

func firstError(replies []redisconn.Reply) error {
	for _, rep := range replies {
		if rep.Err != nil {
			return rep.Err
		}
	}
	return nil
}

// settle forgets a key Redis took, or refused for good.
func (u *visitorState) settle(name string, refused bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	k := u.pending[name]
	if k == nil {
		return
	}
	n := int64(len(k.ids))
	u.npending -= n
	if refused {
		u.dropped += n
	}
	delete(u.pending, name)
}

// sentAll removes the visitor spill files once everything pending went.
func (u *visitorState) sentAll() {
	u.mu.Lock()
	files := u.files
	if len(u.pending) == 0 {
		u.files = nil
	} else {
		files = nil
	}
	u.mu.Unlock()
	for _, f := range files {
		u.env.removeSpill(f)
	}
}

// health adds the visitors' figures to h.
func (u *visitorState) health(h *Health) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	h.PendingVisitors = u.npending
	h.DroppedVisitors = u.dropped + u.noSalt.Load()
}
