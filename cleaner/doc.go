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
// Config.PageSize members (default 500) at a time. Paging by the last
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
// Each due series is trimmed by one Lua script that names only its hash,
// so it runs on the node that holds it, also on a Redis Cluster; the
// scripts of a page go out in one pipeline per node, together with the
// read of the next page. The script deletes the fields older than the
// newest Config.Samples buckets (compared as numbers, never as strings),
// drops the oldest of the rest if more than Config.Samples remain (fields
// stamped ahead of this machine's clock, say), and says how many fields
// are left. Fields that are not numbers were not written by Pulse and are
// left alone. A key Redis refuses to trim (one of another type) is
// reported to Config.OnError and the pass goes on.
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
