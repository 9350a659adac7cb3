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
// Every Config.FlushInterval a background flusher turns the counts of each
// second into per-bucket deltas for every precision and writes them with
// one EVAL of a small Lua script per batch, all batches in one pipeline.
// Inside the script a batch's HINCRBYs and its ZADDs to known: happen
// atomically, so a concurrent cleaner can never see a written hash that is
// missing from known:, nor remove a series between the two writes.
//
// The script also makes a flush idempotent. Each batch carries a sequence
// number, and Redis keeps the highest one applied for this Recorder; a
// batch at or below it is refused. When a flush fails after it was sent
// (a timeout, a dropped connection), the Recorder cannot tell whether
// Redis applied it, so it resends the same batch with the same number
// until Redis answers: a lost reply never double-counts and a lost request
// never loses hits. Batches that never left the process are merged with
// newer hits instead.
//
// Several processes recording the same name into one Redis sum exactly:
// HINCRBY adds, and each Recorder has its own sequence.
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
// In write-through mode (Config.WriteThrough) Record writes at once, one
// pipeline of HINCRBY and ZADD per series and precision as the original
// design does: no loss window, one round trip per call. If that write
// fails, the hits go to the background flusher like any other; a pipeline
// cut off half way may then count some hits twice.
//
// Close flushes everything pending: call it on graceful shutdown.
//
// # Reading
//
// A Store reads what Recorders wrote: the list of known series, and one
// series at one precision as samples sorted by time (numerically, never as
// strings), optionally over [from, to] and zero-filled for charts.
package timeseries
