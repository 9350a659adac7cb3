// Package cleaner trims Pulse time series in Redis to their newest samples
// and forgets series that have become empty.
//
//	clean, err := cleaner.New(cleaner.Config{Recorder: rec}) // its pool, schema and clock
//	if err != nil { ... }
//	defer clean.Close(ctx) // the cleaner runs in the background until then
//
// Recorder, cleaner and entity counters have one lifecycle: the
// constructor starts the background work, Close(ctx) stops it and waits,
// and returns an error when ctx ends first. Config.Manual makes a cleaner
// that only cleans when Pass is called.
//
// # A pass
//
// A pass pages through the known set (known:) in lexical order, Config.PageSize
// members at a time. Paging by the last member seen rather than by index means
// members removed during the pass cannot make it skip others. Precision p is
// cleaned only every max(1, p/60) passes: a day-wide series gains one field a
// day and need not be looked at every minute.
//
// Each due series is trimmed by one Lua script that names only its hash,
// so it runs on the node that holds it, also on a Redis Cluster; the
// scripts of a page go out in one pipeline per node, together with the
// read of the next page. The script deletes the fields older than the
// newest Config.Samples buckets (compared as numbers, never as strings),
// drops the oldest of the rest if more than Config.Samples remain (fields
// stamped ahead of this machine's clock, say), and says how many fields
// are left.
//
// # Unlisting empty series
//
// A series whose hash the trim left empty is removed from the known set,
// and at the end of the pass every such hash is looked at again: the ones
// that have fields once more are listed again at once. On a cluster the
// hash and known: may live on different nodes, so no script can do both
// steps atomically; this protocol is safe because a Recorder always writes
// a hash before it lists it (HINCRBY, then ZADD):
//
//   - a write that lands before the second look is seen by it, and the
//     series is listed again by the cleaner;
//   - a write that lands after the second look is followed by the
//     recorder's own ZADD, which lists the series again.
//
// Either way a series with data is listed. It is unlisted at most for the
// cleaner's two round trips, or, should the cleaner stop in between, until
// the recorder's next flush of that series. TestWriteBeforeUnlistIsListedAgain
// writes exactly between the two steps and fails without the second look.
//
// The cleaner reaches its own keys (the lock) and the known set through
// the same Pool as the recorder: a *redis.Pool, or a *redisc.Cluster.
//
// Every instance of an app may run a cleaner. A short lock in Redis
// (pulse:cleaner:lock, held for one pass) keeps them from cleaning at once;
// an instance that finds it taken skips that pass. Should the lock expire in
// the middle of a long pass, two cleaners only repeat harmless work.
package cleaner
