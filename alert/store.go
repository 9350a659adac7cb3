package alert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// ErrFenced means a newer evaluator holds the lease: this one's writes
// were refused.
var ErrFenced = errors.New("alert: fenced out by a newer lease holder")

// keys are the Redis keys of one app's alerts; the hash tag puts them in
// one slot, so one script can touch them all on a cluster.
type keys struct{ lease, fence, state, sent, log string }

func keysFor(prefix string) keys {
	b := prefix + "{alerts}:"
	return keys{lease: b + "lease", fence: b + "fence", state: b + "state", sent: b + "sent", log: b + "log"}
}

// acquireScript takes or renews the lease for ARGV[1] for ARGV[2] ms. A
// new holder draws a new fencing token; the holder renewing keeps its
// own. It returns the token, or 0 when another instance holds the lease.
var acquireScript = redisconn.NewScript(`
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return tonumber(redis.call('GET', KEYS[2]) or '0')
end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return redis.call('INCR', KEYS[2])
`)

// releaseScript gives the lease up if ARGV[1] holds it.
var releaseScript = redisconn.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// writeScript stores states and the transitions they made, only while
// ARGV[1] is still the current fencing token. ARGV[2] is the number of
// state pairs that follow, then the log entries; ARGV[3] bounds the log.
// KEYS: fence, state hash, log list.
var writeScript = redisconn.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('FENCED') end
local n = tonumber(ARGV[2])
for i = 0, n - 1 do
  redis.call('HSET', KEYS[2], ARGV[4 + 2*i], ARGV[5 + 2*i])
end
for i = 4 + 2*n, #ARGV do
  redis.call('LPUSH', KEYS[3], ARGV[i])
end
if #ARGV >= 4 + 2*n then redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[3]) - 1) end
return 1
`)

// markScript records what was sent, under the same fence.
// KEYS: fence, sent hash; ARGV: token, field, value.
var markScript = redisconn.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('FENCED') end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
`)

// stateStore reads and writes one app's alert state.
type stateStore struct {
	r       *redisconn.Router
	k       keys
	history int
}

func (s *stateStore) do(ctx context.Context, c redisconn.Cmd) (any, error) {
	rep := s.r.DoContext(ctx, []redisconn.Cmd{c}, redisconn.Options{Timeout: 2 * time.Second})[0]
	if rep.Err != nil && strings.Contains(rep.Err.Error(), "FENCED") {
		return nil, ErrFenced
	}
	return rep.Value, rep.Err
}

// acquire takes or renews the lease; token 0 means another holds it.
func (s *stateStore) acquire(ctx context.Context, id string, ttl time.Duration) (int64, error) {
	v, err := s.do(ctx, acquireScript.Cmd([]string{s.k.lease, s.k.fence}, id, ttl.Milliseconds()))
	return redis.Int64(v, err)
}

func (s *stateStore) release(ctx context.Context, id string) error {
	_, err := s.do(ctx, releaseScript.Cmd([]string{s.k.lease}, id))
	return err
}

// load reads every state and sent mark, in one round trip.
func (s *stateStore) load(ctx context.Context) (map[string]*Status, map[string]Sent, error) {
	reps := s.r.DoContext(ctx, []redisconn.Cmd{
		{Key: s.k.state, Name: "HGETALL", Args: []any{s.k.state}},
		{Key: s.k.sent, Name: "HGETALL", Args: []any{s.k.sent}},
	}, redisconn.Options{Timeout: 2 * time.Second})
	states, err := redis.StringMap(reps[0].Value, reps[0].Err)
	if err != nil {
		return nil, nil, fmt.Errorf("alert: load state: %w", err)
	}
	sents, err := redis.StringMap(reps[1].Value, reps[1].Err)
	if err != nil {
		return nil, nil, fmt.Errorf("alert: load state: %w", err)
	}
	sent := make(map[string]Sent, len(sents))
	for k, v := range sents {
		var m Sent
		if json.Unmarshal([]byte(v), &m) == nil {
			sent[k] = m
		}
	}
	return decodeStates(states), sent, nil
}

// snapshotScript reads the states and the last ARGV[1] transitions at
// one moment: writeScript changes both at once, so two separate reads
// could see a transition whose state they do not.
// KEYS: state hash, log list.
var snapshotScript = redisconn.NewScript(`
local log = {}
if tonumber(ARGV[1]) > 0 then log = redis.call('LRANGE', KEYS[2], 0, tonumber(ARGV[1]) - 1) end
return {redis.call('HGETALL', KEYS[1]), log}
`)

// snapshot reads every state and the last n transitions, newest first,
// as one write left them.
func (s *stateStore) snapshot(ctx context.Context, n int) (map[string]*Status, []Transition, error) {
	v, err := redis.Values(s.do(ctx, snapshotScript.Cmd([]string{s.k.state, s.k.log}, n)))
	if err == nil && len(v) != 2 {
		err = fmt.Errorf("%d replies, want 2", len(v))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("alert: snapshot: %w", err)
	}
	states, err := redis.StringMap(v[0], nil)
	if err != nil {
		return nil, nil, fmt.Errorf("alert: snapshot: %w", err)
	}
	items, err := redis.ByteSlices(v[1], nil)
	if err != nil {
		return nil, nil, fmt.Errorf("alert: snapshot: %w", err)
	}
	return decodeStates(states), decodeTransitions(items), nil
}

// decodeStates decodes a state hash, skipping fields it cannot read.
func decodeStates(fields map[string]string) map[string]*Status {
	out := make(map[string]*Status, len(fields))
	for k, v := range fields {
		st := &Status{}
		if json.Unmarshal([]byte(v), st) == nil {
			st.Key = k
			out[k] = st
		}
	}
	return out
}

// write stores changed states and their transitions under token.
func (s *stateStore) write(ctx context.Context, token int64, changed []*Status, log []Transition) error {
	args := []any{token, len(changed), s.history}
	for _, st := range changed {
		b, _ := json.Marshal(st)
		args = append(args, st.Key, b)
	}
	for _, t := range log {
		b, _ := json.Marshal(t)
		args = append(args, b)
	}
	_, err := s.do(ctx, writeScript.Cmd([]string{s.k.fence, s.k.state, s.k.log}, args...))
	if err != nil && !errors.Is(err, ErrFenced) {
		err = fmt.Errorf("alert: write state: %w", err)
	}
	return err
}

// mark records that field's notification was delivered, under token.
func (s *stateStore) mark(ctx context.Context, token int64, field string, m Sent) error {
	b, _ := json.Marshal(m)
	_, err := s.do(ctx, markScript.Cmd([]string{s.k.fence, s.k.sent}, token, field, b))
	if err != nil && !errors.Is(err, ErrFenced) {
		err = fmt.Errorf("alert: mark sent: %w", err)
	}
	return err
}

// current reports whether token is still the fencing token: no other
// instance took the lease since it was drawn.
func (s *stateStore) current(ctx context.Context, token int64) (bool, error) {
	v, err := redis.Int64(s.do(ctx, redisconn.Cmd{Key: s.k.fence, Name: "GET", Args: []any{s.k.fence}}))
	if err != nil {
		return false, fmt.Errorf("alert: read fence: %w", err)
	}
	return v == token, nil
}

// decodeTransitions decodes log entries, skipping those it cannot read.
func decodeTransitions(items [][]byte) []Transition {
	out := make([]Transition, 0, len(items))
	for _, b := range items {
		var t Transition
		if json.Unmarshal(b, &t) == nil {
			out = append(out, t)
		}
	}
	return out
}
