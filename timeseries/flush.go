package timeseries

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// pendingKey is hits of one series in one second, still due at the
// precisions whose bit is set in due. Hits stay by second until batched,
// so MaxPendingAge drops exactly the old ones; a group busy with a batch
// in flight takes its precisions later, so an entry can lose bits.
type pendingKey struct {
	counter int32
	sec     int64
	due     uint32
}

// deltaKey is one bucket of one series at one precision.
type deltaKey struct {
	counter int32
	prec    int8
	bucket  int64
}

// batch is one flush script call: deltas for keys of one group (the one
// server, or one cluster slot), guarded by the group's marker key. Its seq
// lets Redis refuse a second application, so a batch whose reply was lost
// is resent as it is, never rebuilt.
type batch struct {
	Marker  string   `json:"marker"`
	Seq     int64    `json:"seq"`
	Keys    []string `json:"keys"`
	Fields  []string `json:"fields"`
	Deltas  []int64  `json:"deltas"`
	Members []string `json:"members"` // known-set member of each key
	Newest  int64    `json:"newest"`
	incr    int64    // sum of Deltas
	file    string   // spill file it came from, if any
	// src are the pending entries the batch was made of, each with the
	// bit of one of this batch's precisions (none for a spilled batch), so
	// a batch that surely did not land can go back to pending.
	src map[pendingKey]int64
	// uncertain is set once a send of the batch may have landed (a lost
	// connection, a WAIT short of replicas): from then on only Redis can
	// settle it, so it is resent as it is until Redis answers, even if a
	// later send is refused outright.
	uncertain bool
}

// flushScript applies one batch unless a batch of the same marker with the
// same or a later seq was applied already. Increments that Redis refuses
// for one key (a value of another type, a field that is not an integer)
// are skipped and reported, so one foreign key cannot hold back the rest.
// Any other error is raised before the first write (Redis refuses a
// script's first write when full or a replica, and no later one), so a
// failed call changed nothing and may simply be sent again.
//
// On one server the known set is the last key and the members follow the
// deltas in ARGV, so the counts and their listing land atomically.
//
// KEYS: marker, n count keys[, known]. ARGV: seq, marker ttl, n, n
// field/delta pairs[, n members]. Returns {1, refused key indexes...}, or
// {0} for a batch applied before; index n+1 means the known set refused.
var flushScript = redisconn.NewScript(`
local seq = tonumber(ARGV[1])
local done = tonumber(redis.call('GET', KEYS[1]) or '0')
if seq <= done then return {0} end
local n = tonumber(ARGV[3])
local function refused(e)
  return string.find(e, 'WRONGTYPE', 1, true) or string.find(e, 'not an integer', 1, true)
    or string.find(e, 'overflow', 1, true)
end
local out = {1}
for i = 1, n do
  local r = redis.pcall('HINCRBY', KEYS[i + 1], ARGV[2 + 2 * i], ARGV[3 + 2 * i])
  if type(r) == 'table' and r.err then
    if not refused(r.err) then return redis.error_reply(r.err) end
    out[#out + 1] = i
  end
end
if #KEYS > n + 1 then
  local known = KEYS[n + 2]
  local members, seen = {}, {}
  for j = 4 + 2 * n, #ARGV do
    local m = ARGV[j]
    if not seen[m] then
      seen[m] = true
      members[#members + 1] = 0
      members[#members + 1] = m
    end
    if #members == 1000 or (j == #ARGV and #members > 0) then
      local r = redis.pcall('ZADD', known, unpack(members))
      if type(r) == 'table' and r.err then
        if not refused(r.err) then return redis.error_reply(r.err) end
        out[#out + 1] = n + 1
        break
      end
      members = {}
    end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return out
`)

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

// takeLocked picks the batches of one round: every outstanding batch
// again, the next spilled batch of each marker that has none, and a new
// batch from pending for each group whose marker has none. leftover says
// some of it had to wait for a later round (a group busy or full, spilled
// batches queued behind others). At most one
// batch per marker is in flight, so a later batch can never be applied
// before an earlier one of the same marker that failed.
func (r *Recorder) takeLocked() (out []*batch, leftover bool) {
	for _, b := range r.outstanding {
		out = append(out, b)
	}
	for m, q := range r.queued {
		if _, busy := r.outstanding[m]; busy || len(q) == 0 {
			continue
		}
		r.outstanding[m] = q[0]
		out = append(out, q[0])
		if len(q) == 1 {
			delete(r.queued, m)
		} else {
			r.queued[m] = q[1:]
		}
	}
	if len(r.pending) == 0 {
		return out, len(r.queued) > 0
	}
	type building struct {
		b      *batch
		deltas map[deltaKey]int // index into b's slices
	}
	fresh := map[int]*building{}
	blocked := map[int]bool{}
	// Entries left with fewer bits are put back after the loop: a key
	// added to a map while ranging over it may be visited again.
	var partial map[pendingKey]int64
	for k, n := range r.pending {
		c := r.counters[k.counter]
		left := k.due
		for i := range r.schema.Precisions {
			bit := uint32(1) << i
			if k.due&bit == 0 {
				continue
			}
			g := c.groups[i]
			bl, ok := fresh[g]
			if !ok {
				if blocked[g] {
					leftover = true
					continue
				}
				m, ok := r.markers[g]
				if !ok {
					m = r.markerFor(g)
					r.markers[g] = m
				}
				if _, busy := r.outstanding[m]; busy {
					blocked[g] = true // waits for the group's batch in flight
					leftover = true
					continue
				}
				r.seq++
				bl = &building{b: &batch{Marker: m, Seq: r.seq, src: map[pendingKey]int64{}}, deltas: map[deltaKey]int{}}
				fresh[g] = bl
				r.outstanding[m] = bl.b
				out = append(out, bl.b)
			}
			b := bl.b
			dk := deltaKey{counter: k.counter, prec: int8(i), bucket: BucketStart(k.sec, r.schema.Precisions[i])}
			j, ok := bl.deltas[dk]
			if !ok {
				if len(b.Keys) >= maxBatchDeltas {
					leftover = true // the next round takes the rest
					continue
				}
				j = len(b.Keys)
				bl.deltas[dk] = j
				b.Keys = append(b.Keys, c.keys[i])
				b.Fields = append(b.Fields, strconv.FormatInt(dk.bucket, 10))
				b.Deltas = append(b.Deltas, 0)
				b.Members = append(b.Members, c.members[i])
			}
			b.Deltas[j] += n
			b.incr += n
			b.Newest = max(b.Newest, k.sec)
			b.src[pendingKey{counter: k.counter, sec: k.sec, due: bit}] += n
			left &^= bit
		}
		if left != k.due {
			delete(r.pending, k)
			if left != 0 {
				if partial == nil {
					partial = map[pendingKey]int64{}
				}
				partial[pendingKey{counter: k.counter, sec: k.sec, due: left}] += n
			}
		}
	}
	for k, n := range partial {
		r.pending[k] += n
	}
	return out, leftover || len(r.queued) > 0
}

// cmd is the script call of b.
func (r *Recorder) cmd(b *batch) redisconn.Cmd {
	keys := make([]string, 0, len(b.Keys)+2)
	keys = append(keys, b.Marker)
	keys = append(keys, b.Keys...)
	args := make([]any, 0, 3+2*len(b.Keys)+len(b.Members))
	args = append(args, b.Seq, max(r.maxPendingAge*2, 3600), len(b.Keys))
	for i := range b.Keys {
		args = append(args, b.Fields[i], b.Deltas[i])
	}
	if !r.router.IsCluster() {
		keys = append(keys, r.schema.KnownKey())
		for _, m := range b.Members {
			args = append(args, m)
		}
	}
	return flushScript.Cmd(keys, args...)
}

// flush writes what is pending, in rounds, until nothing is left, a round
// fails or ctx ends. Unless force, it does nothing during a backoff.
func (r *Recorder) flush(ctx context.Context, force bool) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	if !force {
		r.mu.Lock()
		wait := r.clock.Now().Before(r.retryAt)
		if wait {
			r.drainLocked()
			r.dropOldLocked()
		}
		r.mu.Unlock()
		if wait {
			return nil
		}
	}
	wrote := false
	for range maxRounds {
		more, did, err := r.round(ctx)
		wrote = wrote || did
		if err != nil {
			r.failed(err)
			return err
		}
		if !more {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	r.succeeded(wrote)
	return nil
}

// maxRounds bounds one flush; catching up on a long outage takes one
// round per maxBatchDeltas deltas of a group.
const maxRounds = 64

// round sends one batch per marker at most, then lists the keys that
// landed (on a cluster, where their listing is a command of its own). It
// reports whether more is left to send and whether anything was written.
func (r *Recorder) round(ctx context.Context) (more, wrote bool, err error) {
	r.mu.Lock()
	r.drainLocked()
	batches, leftover := r.takeLocked()
	r.takes++
	take := r.takes
	r.mu.Unlock()

	timeout := r.timeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	if timeout <= 0 {
		return true, false, fmt.Errorf("timeseries: flush: %w", context.DeadlineExceeded)
	}
	var firstErr error
	if len(batches) > 0 {
		cmds := make([]redisconn.Cmd, len(batches))
		for i, b := range batches {
			cmds[i] = r.cmd(b)
		}
		replies := r.router.Do(cmds, redisconn.Options{Timeout: timeout, WaitReplicas: r.waitReplicas})
		for i, rep := range replies {
			if rep.Err != nil {
				if firstErr == nil {
					firstErr = rep.Err
				}
				if notApplied(rep) {
					r.unsend(batches[i])
				} else {
					r.mu.Lock()
					batches[i].uncertain = true
					r.mu.Unlock()
				}
				continue // otherwise it stays outstanding: resent as it is
			}
			r.applied(batches[i], rep.Value)
			wrote = true
		}
	}
	if err := r.listLanded(timeout); err != nil && firstErr == nil {
		firstErr = err
	}
	// Another round only for what this one had to leave: hits recorded
	// meanwhile wait for the next flush, so a flush under steady traffic
	// ends.
	more = leftover
	if firstErr == nil && !leftover {
		r.mu.Lock()
		r.written = max(r.written, take) // all pending before this take is in Redis
		r.mu.Unlock()
	}
	if firstErr != nil {
		return more, wrote, fmt.Errorf("timeseries: flush: %w", firstErr)
	}
	return more, wrote, nil
}

// notApplied reports whether a failed reply says for sure that the batch
// had no effect: it never left, or Redis answered with an error, which the
// flush script only raises before its first write. A lost connection or a
// WAIT short of replicas leaves the outcome unknown.
func notApplied(rep redisconn.Reply) bool {
	if rep.Unsent {
		return true
	}
	var re redis.Error
	return errors.As(rep.Err, &re)
}

// unsend returns a batch that surely did not land to pending.
func (r *Recorder) unsend(b *batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(b.src) == 0 || b.uncertain {
		return // spilled, or maybe applied before: kept as it is
	}
	if r.outstanding[b.Marker] == b {
		delete(r.outstanding, b.Marker)
	}
	for k, n := range b.src {
		r.pending[k] += n
	}
}

// applied settles a batch Redis answered.
func (r *Recorder) applied(b *batch, reply any) {
	vals, _ := redis.Int64s(reply, nil)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.outstanding[b.Marker] == b {
		delete(r.outstanding, b.Marker)
	}
	if b.file != "" {
		if r.spillLeft[b.file]--; r.spillLeft[b.file] == 0 {
			delete(r.spillLeft, b.file)
			r.removeSpill(b.file)
		}
	}
	if r.router.IsCluster() {
		for _, m := range b.Members {
			r.unlisted[m] = struct{}{}
		}
	}
	if len(vals) < 2 {
		return
	}
	for _, i := range vals[1:] {
		if int(i) == len(b.Keys)+1 {
			r.refusedLocked(r.schema.KnownKey(), 0)
			continue
		}
		if i >= 1 && int(i) <= len(b.Keys) {
			r.refusedLocked(b.Keys[i-1], b.Deltas[i-1])
		}
	}
}

// refusedLocked counts increments Redis will never take for key, naming
// the key in the log the first time.
func (r *Recorder) refusedLocked(key string, n int64) {
	r.droppedIncr += n
	r.health.LastDroppedKey = key
	if _, seen := r.refusedKeys[key]; !seen && len(r.refusedKeys) < 1000 {
		r.refusedKeys[key] = struct{}{}
		slog.Warn("pulse: recorder: key holds a value Pulse cannot add to; its increments are dropped", "key", key)
	}
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
			r.refusedLocked(known, 0)
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

// dropOldLocked drops hits older than MaxPendingAge.
func (r *Recorder) dropOldLocked() {
	cutoff := r.clock.Now().Unix() - r.maxPendingAge
	for k, n := range r.pending {
		if k.sec < cutoff {
			r.droppedIncr += n * int64(bits.OnesCount32(k.due))
			delete(r.pending, k)
		}
	}
	for m, b := range r.outstanding {
		if b.Newest < cutoff && b.file == "" {
			r.droppedIncr += b.incr
			delete(r.outstanding, m)
		}
	}
}

func (r *Recorder) succeeded(wrote bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retryAt, r.backoff = time.Time{}, 0
	r.health.RedisUp = true
	r.health.LastError = ""
	now := r.clock.Now()
	r.health.LastFlushOK = now
	if wrote {
		r.health.LastFlush = now
	}
}

func (r *Recorder) failed(err error) {
	r.mu.Lock()
	if r.backoff == 0 {
		r.backoff = r.interval
	} else {
		r.backoff = min(2*r.backoff, maxBackoff)
	}
	r.retryAt = r.clock.Now().Add(r.backoff)
	r.dropOldLocked()
	r.health.RedisUp = false
	r.health.LastError = err.Error()
	r.health.LastErrorAt = r.clock.Now()
	r.mu.Unlock()
	r.onError(err)
}
