// Package cleaner trims Pulse time series in Redis to their newest samples
// and forgets series that have become empty.
//
// # Running a cleaner
//
// Give it the recorder whose series it cleans: it takes that recorder's
// pool, schema and clock.
//
//	clean, err := cleaner.New(cleaner.Config{Recorder: rec})
//	if err != nil {
//		return err
//	}
//	defer clean.Close(ctx) // the cleaner runs in the background until then
//
// A process that records nothing gives the Pool and the recorders'
// Schema instead; its Prefix names the keys, and every series listed in
// the known set is cleaned, whatever its precision:
//
//	clean, err := cleaner.New(cleaner.Config{Pool: pool, Schema: timeseries.Schema{Prefix: "shop:"}})
//
// Recorder, cleaner and entity counters have one lifecycle: the
// constructor starts the background work, Close(ctx) stops it and waits,
// and returns an error when ctx ends first. The first pass runs at once,
// then one every Config.Interval (default 60 s). Each series keeps its
// newest Config.Samples buckets (default 120).
//
// Config.Manual makes a cleaner that starts nothing: a cron job or a test
// calls Pass, which cleans once and says what it did.
//
//	clean, err := cleaner.New(cleaner.Config{Recorder: rec, Manual: true})
//	...
//	st, err := clean.Pass(ctx)
//	log.Printf("pass %d: %d series, %d buckets deleted, %d series unlisted",
//		st.Pass, st.Series, st.FieldsDeleted, st.SeriesRemoved)
//
// Start and Run start the background passes of a manual cleaner later,
// on a goroutine of their own or on the caller's.
//
// # A pass
//
// A pass pages through the known set (known:) in lexical order,
// Config.PageSize members (default 1000) at a time. Paging by the last
// member seen rather than by index means members removed during the pass
// cannot make it skip others.
//
// Not every precision is cleaned in every pass: a day-wide series gains
// one field a day and need not be looked at every minute. With I the
// interval in whole seconds (at least 1), precision p is due in pass n
// (counted from 0 by each Cleaner) when p/I, in integer division, is at
// most 1 or divides n. The first pass cleans every precision; with the
// default interval of 60 s, 5 s and 1 min are cleaned every pass, 5 min
// every 5th, 1 h every 60th, 5 h every 300th and 1 day every 1440th: about
// once per bucket a series gains.
//
// The due series of a page are grouped by the node that holds their hash
// (one group on a single server), and each node gets one Lua script call
// for its group (at most 1000 series a call). The script declares no keys
// and is flagged allow-cross-slot-keys (Redis 7), so it can reach every
// hash of its node whatever their slots. Per hash it runs HKEYS and, only
// when something is old, HDEL: it deletes the fields older than the
// newest Config.Samples buckets (compared as numbers; a field as long as
// the cutoff is first compared as a string, which orders such integers
// alike and spares converting most fields),
// drops the oldest of the rest if more than Config.Samples remain (fields
// stamped ahead of this machine's clock, say), and tells the hash is
// empty when it deleted every field it read, so no HLEN is needed. Fields
// that are not numbers were not written by Pulse and are left alone. The
// calls of a page go out in one round trip, the nodes served at once,
// together with the read of the next page. So a full pass costs about two
// commands per hash (per known: member; twelve per name over the six
// precisions) and one round trip per 1000 members; BenchmarkPass measures
// it on one server and on a cluster of 3 masters. The script is also
// flagged allow-oom: a node out of memory is one that most needs its
// fields deleted (the lock's node must still take the lock's SET).
//
// Each hash is trimmed by redis.pcall, so one hash cannot fail the others
// of its call:
//
//   - a hash Redis refuses to trim (one of another type) is reported to
//     Config.OnError and skipped;
//   - a hash its node no longer serves (its slot is being moved to
//     another node, or has moved) is left for a later pass and counted in
//     Stats.Deferred; the slot map is read again, before the next page and
//     at the start of the next pass;
//   - a node whose call fails as a whole (down, hanging until the
//     timeout) is skipped for the rest of the pass, its series deferred;
//     the other nodes are cleaned and the pass returns an error naming it.
//     After a failover the map read again routes later pages to the new
//     master.
//
// The script's flags need Redis 7. The cleaner learns what the server
// supports by trying: a server that cannot compile a script with a flags
// line (Redis before 7, or an embedded server such as miniredis, which
// answers neither INFO server nor the flags) fails the first call with a
// compile error, and from then on each series is trimmed by a plain
// script call of its own that names its hash, in the same pipelines. The
// series of that first call are trimmed so in the same pass, so the
// switch costs one round trip and reports no error.
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
// Hashes a pass found empty are unlisted this way even when the pass
// failed on another node.
//
// # Several instances
//
// The cleaner reaches its own keys (the lock) and the known set through
// the same Pool as the recorder: a *redis.Pool, or a *redisc.Cluster.
//
// Every instance of an app may run a cleaner. A short lock in Redis
// (pulse:cleaner:lock, under the schema's prefix, held for one pass and
// expiring after the longer of Interval and 10 s) keeps them from
// cleaning at once; an instance that finds it taken skips that pass
// (Stats.Skipped). Should the lock expire in the middle of a long pass,
// two cleaners only repeat harmless work.
package cleaner
