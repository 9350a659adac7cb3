// Package timeseries counts hits in Redis time series at several
// precisions, in the "Redis in Action" counter design, and reads them
// back.
//
// # Pool
//
// A Recorder and a Store talk to Redis through a Pool: a redigo
// *redis.Pool for one server, or a *redisc.Cluster for Redis Cluster. The
// application creates it, gives it short timeouts (a Redis outage then
// costs a flush a bounded wait) and closes it last:
//
//	pool := &redis.Pool{MaxIdle: 8, DialContext: func(ctx context.Context) (redis.Conn, error) {
//		return redis.DialURLContext(ctx, "redis://127.0.0.1:6379/0", redis.DialConnectTimeout(time.Second),
//			redis.DialReadTimeout(2*time.Second), redis.DialWriteTimeout(2*time.Second))
//	}}
//	defer pool.Close()
//
// # Recorder
//
// NewRecorder checks its Config and starts a background flusher:
//
//	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool})
//	if err != nil {
//		return err
//	}
//	defer rec.Close(ctx) // writes what is pending
//
// Zero Config fields take their defaults: no key prefix and six
// precisions (5 s, 1 min, 5 min, 1 h, 5 h, 1 day; see Schema), a flush
// every second bounded by 2 s, at most 1000 series names, hits kept 15
// minutes while Redis is unreachable, the system clock, and errors logged
// with log/slog at most once every 10 s.
//
// # Counters and Record
//
// A Counter is one series. Get it once, at start or the first time a name
// is seen; the name is checked there (valid UTF-8, 1 to 200 bytes, no
// control characters), not on every hit:
//
//	hits, err := rec.Counter("hits")
//	if err != nil {
//		return err
//	}
//	posts, err := rec.Counter("GET /posts/:id")
//
// Then each request records one hit in each of its series, stamped with
// the clock once:
//
//	rec.Record(hits, posts) // hits.Inc() counts one series alone
//
// Record adds to a per-second slot of each Counter with one atomic add:
// the request path never talks to Redis and does not allocate. Past
// Config.MaxNames distinct names, Counter returns the series
// Config.OverflowName ("overflow") for every new name, so whatever clients
// send the number of keys stays bounded; Health.OverflowNames counts the
// names folded.
//
// # Flush and Close
//
// Every Config.FlushInterval the flusher writes what was recorded. Flush
// writes it now, ignoring any retry backoff, and returns the error of
// that attempt; a test calls it before reading:
//
//	if err := rec.Flush(ctx); err != nil {
//		return err
//	}
//
// Close stops the flusher and writes everything pending, retrying until
// ctx ends: call it on graceful shutdown, after the server has stopped.
// With Config.SpillDir set, what Close cannot write before ctx ends goes
// to a file there, and the next Recorder started with that directory
// sends it first. With Config.WriteThrough, Record itself writes before it
// returns (requests arriving together share one write): no loss window,
// one round trip per request.
//
// # Reading with Store
//
// A Store reads what Recorders wrote. Recorder.Store gives one with the
// recorder's pool, schema and clock; a process that only reads (a
// dashboard of its own) calls NewStore with the recorders' schema:
//
//	store := rec.Store() // or timeseries.NewStore(pool, timeseries.Schema{}, nil)
//	infos, err := store.Series(ctx) // [{hits [5 60 300 3600 18000 86400]} ...]
//	names, err := store.NamesAt(ctx, 60) // the series kept at 1 min
//	now := time.Now().Unix()
//	samples, err := store.Samples(ctx, "hits", 60, timeseries.Range{From: now - 3600, To: now, FillZero: true})
//	windows, err := store.SamplesMany(ctx, []string{"hits", "GET /posts/:id"}, 60, timeseries.Range{From: now - 3600, To: now})
//
// Samples are sorted by time, compared as numbers, never as strings; a
// Sample's Time is its bucket's start in unix seconds. FillZero gives one
// sample per bucket, missing ones as zero, as a chart draws them, up to
// 20000 buckets. A series not in the known set is ErrUnknownSeries; a
// precision the schema does not have is an error too. SamplesMany reads
// many series in one round trip, leaving out the unknown ones; with both
// ends of the range set it fetches only the range's buckets (up to 4096
// of them), so a chart costs the same however long the hashes grew.
//
// # Health
//
// Health is a snapshot for status pages and probes (package dashboard
// serves it as JSON at api/health):
//
//	h := rec.Health()
//	if !h.RedisUp {
//		log.Printf("redis: %s; %d hits waiting", h.LastError, h.PendingHits)
//	}
//
// Totals gives the hits each series recorded in this process since start,
// written or not, for exporters (package promexport serves them to
// Prometheus); DurationTotals gives their durations. A Store reads the
// durations and visitors of any window, and Ping is a cheap probe:
//
//	d, err := store.LastDurations(ctx, "hits", 60, 60) // d.Window.Quantile(0.99)
//	v, err := store.LastVisitors(ctx, "hits", 3600, 24) // v.Window: the day's visitors
//	err = store.Ping(ctx)
//
// # Writing an adapter
//
// The middlewares of packages middleware (Echo v4), echov5 and pulsehttp
// use nothing an adapter for another framework cannot: they get their
// Counters once, time the request only when Recorder.KeepsDurations,
// work out its Visitor only when Recorder.KeepsVisitors, and hand the
// finished request to Recorder.RecordRequest, which records it with no
// allocation and one lock:
//
//	hits, _ := rec.Counter("hits")
//	route, _ := rec.Counter("GET /posts/{id}") // cache it per route
//	class, _ := rec.Counter("status:2xx")
//	start := time.Now()
//	next.ServeHTTP(w, r)
//	q := timeseries.Request{
//		Duration: time.Since(start),
//		Timed:    [timeseries.MaxTimed]*timeseries.Counter{hits, route},
//		Counted:  [timeseries.MaxCounted]*timeseries.Counter{class},
//		Visitor:  timeseries.Visitor{Addr: host, UserAgent: r.UserAgent()},
//		Visited:  1 << 0, // the visitor counts in Timed[0], hits
//	}
//	rec.RecordRequest(q)
//
// Timed series count the hit, the duration and, by the bits of Visited,
// the visitor; Counted series count the hit only. The shipped adapters
// name a route "<METHOD> <pattern>", requests no route matched
// "unmatched", status classes "status:2xx" … "status:other", and a
// route's "<METHOD> <pattern> status:2xx"; package adapter holds those
// rules for an adapter of another router, and adapter/adaptertest the
// table every adapter passes.
//
// # Testing
//
// A ManualClock moves only when told to. Given as Config.Clock it stamps
// the hits and also times the flusher, whose flushes then run when
// Advance moves it past a FlushInterval:
//
//	clock := timeseries.NewManualClock(time.Unix(1700000000, 0))
//	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, Clock: clock})
//	...
//	rec.Record(hits)
//	clock.Advance(5 * time.Second) // the next hit lands in the next 5 s bucket
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
// # Durations
//
// The middlewares also record each request's duration in its hits, route
// and app-named series (not in the status series), unless
// Config.DisableDurations is set. A request's durations are counted in
// process, per series, clock second and stripe, under one uncontended
// lock per request, and written with its hits: the same flush, the same
// batch, the same marker, so they are exactly once through error
// replies, failover, slot migrations and spills as the hits are. There is no
// Redis command per request.
//
// A bucket of a series' durations at one precision is the hash
//
//	lat:{count:<precision>:<name>}:<bucket start>
//
// (after Schema.Prefix): bins by index (fields "0", "1", ... and u, o
// for durations outside DurationMin..DurationMax), n the count, s the sum
// in nanoseconds, min and max (Schema.DurationKey names it). The braces
// put every lat key in its count key's slot, hence in its flush group. A
// count key with a hash tag of its own (a route pattern "GET
// /posts/{id}") lends it: lat:{id}:count:5:GET /posts/{id}:<bucket>. A
// name no braces can co-locate ("a}b") keeps its hits and records no
// durations. The flush script adds bins and n by HMGET and HSET (exact up
// to 2⁵³ per bin), s by HINCRBY, keeps min and max if smaller or larger,
// and sets EXPIREAT bucket start + 121 × precision, so a series keeps
// 120 buckets of durations per precision with no cleaner. Quantiles are
// within Config.DurationAccuracy (5 % by default, down to 1 %) of the
// exact ones, for one bucket or any merge of buckets and instances.
//
// # Slow requests
//
// With Config.SlowThresholds, each request slower than a threshold also
// counts a hit in the series SlowSeries(name, threshold), "slow:500ms
// GET /posts/:id", for each series it is timed in: an exact count, as
// the request is recorded, in the book's keys, which a latency SLO
// (package alert) reads as an availability SLO reads the 5xx class. The
// first recorder to count a threshold notes since when in the hash
// pulse:slow (Schema.SlowKey; Store.SlowSince reads it).
//
// # Heartbeats
//
// After each flush a Recorder publishes its flush health in the hash
// pulse:heartbeats (Schema.HeartbeatsKey), one field per recorder
// process: a Heartbeat with its last good flush and the hits it holds.
// Store.Heartbeats reads them all, so that one instance can tell
// another cut off from Redis, whose hits wait in its memory (package
// alert holds its alerts then). Close, with everything written, marks
// it closed; a heartbeat that cannot be written counts as a failed
// flush.
//
// # Visitors
//
// The middlewares also count each request's visitor in the hits series
// (routes and app-named series opt in), unless Config.DisableVisitors
// is set: the first 8 bytes of SHA-256 over the UTC day's salt, the
// client address and the User-Agent (or the app's own id), computed on
// the request path, where nothing else of the visitor is kept (a
// stripe's memo of its last visitors, keyed by a per-process seeded
// hash and emptied by a new salt, spares a repeat visitor the SHA-256). The salt
// is shared by every instance through the key pulse:salt:<day start>
// (after Schema.Prefix), set once with SET NX GET and expiring 5 minutes
// after its day, and fetched a day ahead; it appears nowhere else. The
// ids are merged per stripe between flushes and sent once per flush, one
// PFADD per HyperLogLog
//
//	uv:{count:<precision>:<name>}:<bucket start>
//
// with its EXPIREAT (bucket start + 121 × precision), at the schema's
// precisions in Schema.VisitorPrecisions. PFADD is idempotent, so
// there is no marker: a key's ids are kept until Redis answered OK, then
// forgotten; a key of another type is skipped and reported; Close
// spills what it could not send to a .visitors file in SpillDir.
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
// # Flushing
//
// A flush turns the counts of each second into per-bucket deltas for
// every precision and writes them with a small Lua script per batch, sent
// as EVALSHA (EVAL only when the server answers NOSCRIPT), all batches in
// one pipeline per server (one script call per node on a cluster, see
// below). On one server a batch's HINCRBYs and its ZADDs to known: happen
// atomically in the script.
//
// known: gets a member only when it may be missing: the first time a
// Recorder writes the series at that precision, and whenever a write
// creates the series' hash (the script sees an HINCRBY return its delta
// on a hash of one field), since the cleaner unlists only series whose
// hash it found empty. A flush that creates no hash sends no ZADD.
//
// # Exactly once
//
// Each batch carries a sequence number and names a marker key; Redis keeps
// in the marker the highest number applied, and refuses a batch at or
// below it, so a flush is idempotent. At most one batch per marker is in
// flight: a batch that failed is sent again, as it is, before anything
// newer of its marker, so a later batch can never land before an earlier
// one and make it be refused.
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
// HINCRBY adds, and each Recorder has its own markers
// (pulse:flushed:<instance>, expiring 2 × MaxPendingAge, at least 1 h,
// after its last flush).
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
// # Redis down or slow
//
// Recording never fails, and outside write-through mode never waits on
// Redis. A failed flush keeps its hits in memory
// and retries with backoff (from FlushInterval doubling to 30 s). Hits
// older than Config.MaxPendingAge are dropped and counted in
// Health.DroppedHits. Errors go to Config.OnError. One flush is bounded by
// Config.FlushTimeout. In write-through mode, while Redis fails, Record
// returns at once and the hits wait for the background flusher.
//
// # Spill
//
// A spill file holds the batches Close could not send, each with its
// marker and sequence number, and a checksum: the Recorder that sends
// them later is refused by Redis for any batch that did land before, so
// they are sent once whatever happened in between. The file is written
// under a temporary name and renamed once complete, and removed once all
// its batches are written. A torn or foreign file is renamed to end in
// .bad and reported, never half sent.
//
// # Redis Cluster
//
// On a cluster the unit of idempotence is a node batch: a round groups
// its writes by the node serving each key's slot (in the recorder's slot
// map), and each node gets one batch with one seq, guarded by one marker
// key of that node, pulse:flushed:<instance>:n{<tag>}, the tag chosen to
// land in the lowest slot the node serves (the same name while the map
// is), so a flush costs one script call and one marker command per node,
// not per slot. The call (Redis 7's allow-cross-slot-keys; a batch is
// capped near 100,000 arguments, the rest waits for the next round)
// declares only the marker: Redis routes and redirects it by the marker.
//
// A node batch applies as a whole or not at all. A key the node turns
// out not to hold (its slot moving, or moved) makes the script undo the
// batch's writes and fence the marker: it records the seq as abandoned
// (-seq, where an applied batch leaves seq), so no copy of that batch,
// however late, can apply afterwards. The recorder then takes the
// batch's writes back into new batches with a new seq, the slot that was
// not there in a batch of its own (pulse:flushed:<instance>:{<tag>},
// landing in that slot, sent by a script that declares all its keys, so
// Redis redirects it as a whole) until one lands: a slot being migrated
// holds back its own writes only.
//
// The marker lives on one node at a time and moves with its slot
// (MIGRATE carries its value); check, writes and marker are one script;
// so the first send of a batch and every resend race on the same marker
// wherever it is, and the first to run decides. A send whose reply was
// lost is resent as it is, same marker, same seq, same contents,
// following the marker's redirections, until Redis answers: applied (now
// or before), abandoned, or refused before running when no earlier send
// may have run; only then may its writes go into another batch. So the
// refusal of a resend is all or nothing per node batch, for every slot
// in it, through migrations of its slots or of the marker's. A failover that loses a script's effects
// before a replica has them loses the marker's with them, so the resend
// applies again, once. The per-slot script is also what a server without
// the node script (before Redis 7) gets for every batch. A spilled node
// batch is sent again with its marker; if it was abandoned, its writes go
// out in per-slot batches of this recorder. The series are listed in
// known: by a ZADD sent once their counts landed: a hash is always written
// before it is listed (package cleaner relies on that order).
//
// A MOVED, ASK, TRYAGAIN or lost node makes the recorder read the slot
// map again; the batches of a slot being migrated wait for it to settle.
// With Config.WaitReplicas set, every node's pipeline ends with WAIT, and
// a batch counts as written only once that many replicas have it, so a
// master killed right after a flush loses no hit. The store pipelines its
// reads per node.
package timeseries
