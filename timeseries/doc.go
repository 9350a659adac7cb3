// Package timeseries counts hits in Redis time series at several
// precisions, in the "Redis in Action" counter design.
//
// # Keys
//
// A series at one precision is the hash count:<precision>:<name>; each
// field is the start of a bucket in unix seconds (floor(t/p)·p) and its
// value the hits in that bucket. The sorted set known: lists every series
// as the member <precision>:<name> with score 0. Schema.Prefix goes before
// both; with no prefix the keys are exactly those of the original design,
// so existing readers and cleaners keep working.
//
// # Recording
//
// A Recorder hands out one *Counter per series name; names are checked
// when the Counter is made, and a cap (Config.MaxNames) folds names past
// it into one overflow series, so whatever clients send the key count
// stays bounded. Record adds to a per-second slot of each Counter with one
// atomic add: the request path never talks to Redis and does not allocate.
//
// Every Config.FlushInterval, timed by Config.Clock (a test moves a
// ManualClock to run it), a background flusher turns the counts of each
// second into per-bucket deltas for every precision and writes them with
// a small Lua script per batch, sent as EVALSHA (EVAL only when the server
// answers NOSCRIPT), all batches in one pipeline per server. On one server
// a batch's HINCRBYs and its ZADDs to known: happen atomically in the
// script. On a Redis Cluster a script may only touch keys of one hash
// slot, so batches are made per slot and pipelined per node, and the
// series are listed in known: by a ZADD sent once their counts landed: a
// hash is always written before it is listed (package cleaner relies on
// that order).
//
// # Exactly once
//
// Each batch carries a sequence number and names a marker key; Redis keeps
// in the marker the highest number applied, and refuses a batch at or
// below it. On a cluster there is one marker per slot, named with a hash
// tag that lands it in that slot (pulse:flushed:<instance>:{<tag>}), so a
// batch and its marker move together when the slot migrates. At most one
// batch per marker is in flight: a batch that failed is sent again, as it
// is, before anything newer of its slot, so a later batch can never land
// before an earlier one and make it be refused.
//
// When a send fails after it may have reached Redis (a timeout, a lost
// connection), only Redis knows whether it was applied, so the same batch
// with the same number is sent until Redis answers: a lost reply never
// double-counts and a lost request never loses hits. A batch that surely
// did not land (no connection, or an error reply, which the script only
// raises before its first write) goes back to the pending hits, merged
// with newer ones.
//
// Several processes recording the same name into one Redis sum exactly:
// HINCRBY adds, and each Recorder has its own markers.
//
// # Error replies
//
// Every reply is classified:
//
//   - OOM, READONLY, LOADING, BUSY, MASTERDOWN, NOREPLICAS, TRYAGAIN,
//     CLUSTERDOWN, MOVED, ASK, an unknown error and any connection error
//     pass: the batch is kept and sent again with backoff, and Health says
//     Redis is not OK, with the error, while it lasts. Since the script
//     meets them before its first write, nothing was half applied.
//   - WRONGTYPE, or a field that is not an integer, is about one key: the
//     script skips that key's increments and applies the rest, and the
//     loss is counted (Health.DroppedIncrements, DroppedHits) and the key
//     named once in the log. Other series, and the other precisions of
//     the same series, are not held back.
//
// On a cluster a MOVED, ASK, TRYAGAIN or lost node makes the recorder read
// the slot map again; the batches of a slot being migrated wait for it to
// settle. With Config.WaitReplicas set, every node's pipeline ends with
// WAIT, and a batch counts as written only once that many replicas have
// it, so a master killed right after a flush loses no hit.
//
// # Redis down or slow
//
// Recording never blocks or fails. A failed flush keeps its hits in memory
// and retries with backoff (from FlushInterval doubling to 30 s). Hits
// older than Config.MaxPendingAge (default 15 min) are dropped and counted
// in Health.DroppedHits. Errors go to Config.OnError, by default a
// rate-limited log/slog line. Give the pool short dial, read and write
// timeouts; one flush is also bounded by Config.FlushTimeout.
//
// In write-through mode (Config.WriteThrough) Record runs a flush at once
// and returns when it is done (calls made meanwhile share the next one),
// through the same idempotent path: no loss window, a round trip per
// request. While Redis fails, Record returns at once and the hits wait for
// the background flusher.
//
// Close flushes everything pending: call it on graceful shutdown. With
// Config.SpillDir set, what Close cannot write before its context ends is
// written to a file there (batches with their markers and numbers, and a
// checksum) and Close returns nil; the next Recorder started with that
// directory sends the file first, once, and removes it. A torn or foreign
// file is renamed to end in .bad and reported, never half sent.
//
// # Units
//
// A hit is one request counted in one series: a request counted in the
// series hits, GET /posts/:id and status:2xx is three hits. Each hit is
// written as one increment per precision. Health.PendingHits and
// DroppedHits count hits (increments divided by the precisions, rounded
// up, so a hit lost at one precision of six counts as one);
// DroppedIncrements counts the increments themselves.
//
// # Reading
//
// A Store reads what Recorders wrote (Recorder.Store gives one with the
// recorder's pool, schema and clock): the list of known series, and one
// series at one precision as samples sorted by time (numerically, never as
// strings), optionally over [from, to] and zero-filled for charts.
package timeseries
