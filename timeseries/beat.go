package timeseries

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// HeartbeatsKey is the hash in which every Recorder of the schema
// publishes its flush health: a field per recorder process (its
// instance id, as in pulse:flushed:<instance>), the value its Heartbeat
// as JSON. One key, so one read finds them all, on a cluster too.
func (s Schema) HeartbeatsKey() string { return s.Prefix + "pulse:heartbeats" }

// SlowKey is the hash that says since when the recorders of the schema
// count the requests slower than each threshold (Config.SlowThresholds):
// a field per threshold (ThresholdText), the unix second the first
// recorder counting it was made.
func (s Schema) SlowKey() string { return s.Prefix + "pulse:slow" }

// Heartbeat is what one Recorder last published of its flushes, after
// each flush that was not waiting out a failure's backoff: how far its
// hits have reached Redis. A recorder cut off from Redis cannot publish,
// so its At grows old; one that closed with everything written says so.
type Heartbeat struct {
	Instance string `json:"-"` // the recorder's id, its field
	Host     string `json:"host,omitempty"`
	PID      int    `json:"pid,omitempty"`
	// At is when it was published, LastFlushOK when a flush last ended
	// well, both by the recorder's clock.
	At          time.Time `json:"at"`
	LastFlushOK time.Time `json:"last_flush_ok"`
	// PendingHits are the hits it held, not yet in Redis (Health).
	PendingHits   int64         `json:"pending_hits"`
	FlushInterval time.Duration `json:"flush_interval"`
	// MaxPendingAge is how long it keeps hits it cannot write
	// (Config.MaxPendingAge); 0 from a recorder that did not say.
	MaxPendingAge time.Duration `json:"max_pending_age,omitempty"`
	// Closed: the recorder closed with every hit written; it will not
	// publish again.
	Closed bool `json:"closed,omitempty"`
}

var hostName, _ = os.Hostname()

// beat publishes r's heartbeat, and, until Redis has them, since when it
// counts its slow thresholds. A failure counts as a failed flush: Redis
// is out of reach. During a failure's backoff it does nothing, as the
// flush does.
func (r *Recorder) beat(ctx context.Context, closed bool) error {
	r.mu.Lock()
	waiting := !closed && r.clock.Now().Before(r.status.retryAt)
	registered := r.slowRegistered
	r.mu.Unlock()
	if waiting {
		return nil
	}
	h := r.Health()
	now := r.clock.Now()
	hb, _ := json.Marshal(Heartbeat{Host: hostName, PID: os.Getpid(), At: now, LastFlushOK: h.LastFlushOK,
		PendingHits: h.PendingHits, FlushInterval: r.interval, MaxPendingAge: time.Duration(r.maxPendingAge) * time.Second, Closed: closed})
	key, slowKey := Schema(r.schema).HeartbeatsKey(), Schema(r.schema).SlowKey()
	cmds := []redisconn.Cmd{{Key: key, Name: "HSET", Args: []any{key, r.id, hb}}}
	if !registered {
		for _, t := range r.slow {
			cmds = append(cmds, redisconn.Cmd{Key: slowKey, Name: "HSETNX", Args: []any{slowKey, ThresholdText(t), r.started}})
		}
	}
	timeout, err := redisconn.Timeout(ctx, r.sender.timeout)
	if err == nil {
		for _, rep := range r.sender.router.Do(cmds, redisconn.Options{Timeout: timeout}) {
			if rep.Err != nil {
				err = rep.Err
				break
			}
		}
	}
	if err != nil {
		if !closed {
			r.failed(fmt.Errorf("timeseries: heartbeat: %w", err))
		}
		return err
	}
	r.mu.Lock()
	r.slowRegistered = true
	r.mu.Unlock()
	return nil
}

// Heartbeats reads every recorder's last Heartbeat, in no order; a value
// that is not a Heartbeat is left out.
func (s *Store) Heartbeats(ctx context.Context) ([]Heartbeat, error) {
	key := Schema(s.schema).HeartbeatsKey()
	fields, err := redis.StringMap(s.do(ctx, redisconn.Cmd{Key: key, Name: "HGETALL", Args: []any{key}}))
	if err != nil {
		return nil, fmt.Errorf("timeseries: heartbeats: %w", err)
	}
	out := make([]Heartbeat, 0, len(fields))
	for id, v := range fields {
		var hb Heartbeat
		if json.Unmarshal([]byte(v), &hb) == nil {
			hb.Instance = id
			out = append(out, hb)
		}
	}
	return out, nil
}

// SlowSince reads since when the recorders count the requests slower
// than each threshold, by ThresholdText: a threshold no recorder counts
// is not there.
func (s *Store) SlowSince(ctx context.Context) (map[string]time.Time, error) {
	key := Schema(s.schema).SlowKey()
	fields, err := redis.Int64Map(s.do(ctx, redisconn.Cmd{Key: key, Name: "HGETALL", Args: []any{key}}))
	if err != nil {
		return nil, fmt.Errorf("timeseries: slow thresholds: %w", err)
	}
	out := make(map[string]time.Time, len(fields))
	for t, sec := range fields {
		out[t] = time.Unix(sec, 0)
	}
	return out, nil
}

// do runs one command.
func (s *Store) do(ctx context.Context, c redisconn.Cmd) (any, error) {
	rep := s.router.DoContext(ctx, []redisconn.Cmd{c}, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)})[0]
	return rep.Value, rep.Err
}
