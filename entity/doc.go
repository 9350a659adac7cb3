// Package entity keeps an app's own counts — followers, posts, views,
// likes, unread replies — durable in SQL, cached in Redis, and never
// silently wrong.
//
// An app declares kinds (user, post, group, message...) and their fields;
// an entity is a kind and an int64 id. A count nobody touched is 0 and
// takes no storage.
//
// # Tutorial
//
// Declare the kinds and make the Counters. New only checks the config;
// Migrate creates the tables (idempotent: run it at every start):
//
//	counters, err := entity.New(ctx, entity.Config{
//		DB:      db,             // *sql.DB
//		Dialect: entity.SQLite,  // or entity.MySQL, entity.Postgres
//		Pool:    pool,           // *redis.Pool or *redisc.Cluster; nil: SQL only
//		Kinds: []entity.Kind{
//			{Name: "user", Fields: []string{"followers", "posts"}},
//			{Name: "post", Fields: []string{"views", "likes"}, Hot: map[string]int{"views": 8}},
//			{Name: "message", Fields: []string{"replies"}},
//		},
//	})
//	if err != nil {
//		return err
//	}
//	defer counters.Close(ctx) // stops the background work, flushes what is pending
//	if err := counters.Migrate(ctx); err != nil {
//		return err
//	}
//
// Count, and read one entity or many (one Redis round trip for the
// cached ones, one SQL query for the rest):
//
//	err = counters.Incr(ctx, "post", 7, "likes", 1)
//	post, err := counters.Get(ctx, "post", 7)                   // entity.Counts{"views": 12, "likes": 3}
//	posts, err := counters.BatchGet(ctx, "post", []int64{7, 8}) // in the order asked
//	top, err := counters.Top(ctx, "post", "views", 10)          // []entity.Ranked, from SQL
//	err = counters.Reset(ctx, "message", 42, "replies")         // the user read the replies
//
// Write the app's own row and the counts that count it in one
// transaction:
//
//	err = counters.InTx(ctx, func(ctx context.Context, tx *entity.Tx) error {
//		if _, err := tx.ExecContext(ctx, "INSERT INTO posts (author) VALUES (?)", author); err != nil {
//			return err
//		}
//		if err := tx.Incr("user", author, "posts", 1); err != nil {
//			return err
//		}
//		return tx.Touch() // lights every user's red dot
//	})
//
// Unread counts need no fan-out: a notice is one global write, the feed
// is a sum over the followees' counts:
//
//	feed := entity.Feed{Kind: "user", Field: "posts"}
//	u, err := counters.Unread(ctx, user, feed, followees) // u.Notices, u.Feed, u.Dot
//	err = counters.MarkRead(ctx, user, feed, followees)
//
// Repair a counter from the app's own tables when it may have drifted:
//
//	fixes, err := counters.Reconcile(ctx, "user", "followers", countFollowersFromYourTable)
//
// The rest of this documentation is the protocol: how the counts stay
// right across SQL, Redis, races, outages and crashes.
//
// # SQL
//
// One table (default pulse_counters) holds (kind, entity_id, field, slot)
// → value, for MySQL/MariaDB (utf8mb4 tables), SQLite and PostgreSQL
// (through pgx's database/sql driver). Drivers are
// recognised by their errors' methods and type names, not imported, so a
// program links only the driver it uses.
// Increments are atomic upserts adding a delta (value = value + ?), never
// a read and a write back; Reset is one UPDATE to 0. Migrate creates it
// and four small tables next to it, five in all: <table>_batches
// (write-behind and buffered batches applied), <table>_stale (entities
// whose cache entry must be dropped), <table>_seqs (the global notice
// sequence and red-dot time) and <table>_marks (each user's read marks).
//
// SQLite allows one writer at a time. Open it with WAL and a busy timeout;
// the tests also cap the pool at one connection:
//
//	db, _ := sql.Open("sqlite", "file:app.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
//	db.SetMaxOpenConns(1)
//
// With one connection the process's writers queue in database/sql rather
// than in SQLite's busy handler, and a transaction that reads before it
// writes never finds another connection's write lock in its way. A larger
// pool works too: busy errors (like MySQL deadlocks) are retried, and
// other processes on the same file are covered by the busy timeout.
//
// # Deadlines
//
// Every statement runs under Config.StatementTimeout (2 s), retries
// included; past it the call fails with ErrUnavailable, which an app
// answers as 503. Reads of cached entities need no SQL and go on while the
// database is stalled. Writes run in a transaction whose COMMIT is not
// sent once the deadline has passed, so a write answered with an error is
// not applied later by a server that was only stalled; the one window left
// is a COMMIT sent and its reply lost. A call that must wait inside the
// package — a read for a flush of buffered counts, a write for the sweep
// that puts a recovered Redis back in use — waits no longer than its
// context, and fails with ErrUnavailable too. InTx lets an app commit its own
// rows and the counts that count them together. Bound the pool
// (SetMaxOpenConns) so a stall cannot pile up connections, and give SQLite
// a busy timeout no longer than the statement timeout.
//
// # Cache
//
// Pool is a *redis.Pool or a *redisc.Cluster. An entity's keys share the
// hash tag {kind:id} (pulse:ent:{post:7}, its :lease and :writes), so every
// script touches one slot; no script spans entities. Write-behind, whose
// pending hashes span entities, is refused on a cluster.
//
// Each cached entity is one Redis hash, a field per counter, with a TTL
// (default 12 h) set when a read warms it. Cached values carry an offset of
// 2^40: HINCRBY on an entity that is not cached starts from 0 and returns
// far less, which tells the writer the cache was cold, and it deletes the
// key at once; the next read warms it. Readers treat a field below half
// the offset as cold, so counts that drifted negative still cache.
//
// Get and BatchGet read every cached entity in one Redis round trip (a
// pipeline of one script per entity, by EVALSHA), load the misses from SQL
// in one query and warm them in one more round trip.
//
// # Compact layouts
//
// Config.Layout = LayoutSparse or LayoutCompact keeps the cache in a
// fraction of the memory (docs/entity-layouts.md has the figures). The
// entities of a kind share buckets: one small hash per bucket, which Redis
// keeps listpack-encoded (up to 128 entries, as the redis.conf Redis ships
// says), one field per entity whose value packs all its counts as zigzag
// varints. LayoutCompact buckets runs of redisstore.BucketSize consecutive
// ids, the field being the id's offset: right for ids handed out densely
// from 1. LayoutSparse puts an id in one of about Kind.Population / 64
// buckets by a hash of it and keeps in the field only what the bucket
// does not tell: right for ids of any shape, snowflake or random ones
// included. A present field is a cached entity, so no offset is needed to
// tell cold from zero; each update is one script that decodes, adds and
// re-encodes the value atomically. An entity's lease and write marks are
// keys of their own that live only while a warm-up or a write is under
// way, tagged like its bucket, so on a cluster every script still touches
// one slot and a batch read is one round trip per node.
//
// Fields in a bucket cannot expire one by one. Each bucket has a young and
// an old hash instead: a script that finds the young hash older than TTL/2
// by Config.Clock renames it over the old one, and an entity found in the
// old hash moves back to the young one. Entities nobody read or wrote for
// TTL/2 to TTL leave the cache with the old hash; the young hash also
// carries a TTL, for buckets nobody touches at all. Values are exact to
// ±2^53 (Lua's numbers); a kind has at most MaxCompactFields fields, and
// fields may be appended to a kind but not reordered or removed without a
// new Prefix. A sparse kind whose population outgrows Kind.Population
// fills its buckets past the listpack's size: the counts stay exact, the
// memory grows, and OnError hears of it once.
//
// Under maxmemory, any eviction policy keeps the counts right: an evicted
// bucket, lease or write mark makes entities cold, never wrong. With
// WriteBehind, choose a volatile-* policy: the pending deltas carry no
// TTL, so only the cache is evicted, never deltas not yet in SQL.
//
// # Warm-up races
//
// A reader that loads a value from SQL and then caches it can be
// overtaken by a writer, and cache a value missing the write. So a read
// that finds an entity cold takes a lease on it (SET NX with a token) in
// the same script; a writer finding the entity cold deletes the lease with
// the key, and the warm-up script caches only if its token still holds the
// lease.
//
// The converse race would count a write twice: a writer commits to SQL, a
// reader loads that value and caches it, and then the writer adds its
// delta to the cache. So a write-through writer first marks the entity
// (a sorted set of tokens with deadlines); warm-ups are refused while any
// mark stands, and the writer removes its mark in the same script that
// updates the cache. A writer slower than the mark's deadline deletes the
// entry instead of adding to it.
//
// # Redis down
//
// In the default write-through mode every write goes to SQL first, then to
// the cache. When a cache call fails, the cache is taken out of use: reads
// come from SQL, writes go to SQL only, and each write records its entity
// in <table>_stale in the same transaction. A background probe notices
// Redis is back; the recorded entities' entries (which may have survived
// the outage with old values) are deleted before the cache is used again,
// and every process sweeps the table each FlushInterval, so one process's
// outage cannot leave another serving a stale value for long. Nothing
// returns an error that SQL could answer. Writes that record an entity as
// stale hold a read lock that the probe takes for its last sweep, so none
// can slip in between that sweep and the cache's return.
//
// Give the pool short timeouts and a cap (MaxActive with Wait): a call that
// waits past CacheTimeout counts as a failure and SQL answers instead.
//
// # Write-behind
//
// With Config.WriteBehind an increment goes to Redis only: one script adds
// it to the cached entity, if warm, and to a pending hash. A flusher
// persists the pending deltas every FlushInterval in four steps:
//
//  1. a script renames the pending hash to a flushing hash tagged with a
//     new batch id — unless a flushing hash exists, which is finished first;
//  2. the flushing hash is read;
//  3. one SQL transaction inserts the batch id into <table>_batches and
//     applies the deltas; if the id is there already it does nothing;
//  4. a script deletes the flushing hash if it still holds that batch.
//
// A process dying anywhere in between leaves either a flushing hash whose
// batch is not in SQL (the next flush applies it) or one whose batch is
// (the next flush just deletes it): no delta is lost or applied twice.
// A cold read in this mode adds the pending deltas, and the flushing ones
// unless SQL has their batch, to what it loaded from SQL; a flush epoch
// read before and checked after the SQL query makes it start over if a
// batch moved meanwhile.
//
// What it trades: while Redis is down, writes go straight to SQL, reads
// come from SQL without the deltas still in Redis, and a write whose
// outcome in Redis is unknown (the connection failed after sending) is
// reported as an error rather than risk counting it twice; one that Redis
// refused outright (out of memory, loading, a replica) goes to SQL. Deltas live
// only in Redis until flushed, so run it with persistence (appendonly).
// Top and Reconcile see SQL, so they lag by up to one flush (Reconcile
// flushes first). All processes sharing a Prefix must use the same mode.
//
// # Hot fields
//
// A field declared in Kind.Hot spreads its SQL value over N slot rows, so
// concurrent writers to one entity rarely wait on the same row lock. The
// slots are taken in turn, chosen in Go (MySQL would evaluate RAND() once
// per row scanned), so writers in flight at once hold different rows;
// reads sum the slots; every FoldInterval a transaction moves the slots
// into slot 0 under their row locks, so sums never change while it runs.
// Slots take away the wait for the row lock; each increment still pays
// its own commit (on MySQL with innodb_flush_log_at_trx_commit=1, a
// redo-log flush to disk) and round trips, so a counter hotter than the
// database commits is for Kind.Buffered.
//
// # Buffered fields
//
// A field in Kind.Buffered is counted in the process: an increment is a
// compare-and-swap on a cell, no Redis and no SQL. Every BufferInterval
// (1 s) the cells are swapped out into a batch written through InTx with
// its batch id recorded in the same transaction, so a batch whose commit
// reply was lost is resent under the same id and applied once. Get and
// BatchGet add the deltas not yet written, so a user sees their own view at
// once (while a batch's outcome is in doubt a read may count it twice).
// Close flushes; a crash loses at most one BufferInterval of increments.
//
// # Unread without fan-out
//
// Notices are one global sequence (Tx.PublishNotice): a user's unread
// notices are the ids above their last-read mark. The feed is the sum of
// the followees' counts (e.g. user.posts) now, minus the sum when the user
// last read it; Tx.Followed moves the mark so earlier posts of a new
// followee are not news; at most MaxFollowees (2000) followees are summed,
// one batch read per thousand. The red dot is a global last-update time
// (Tx.Touch) newer than the user's last read. Publishing or posting writes
// nothing per user; reading writes the user's marks, one SQL row each.
// PruneInactive (run every FoldInterval with InactiveAfter set) drops the
// marks of users who have not read for that long: they read as all read.
//
// # Unread counts and Reset
//
// Reset sets a counter to 0 with one UPDATE over its slot rows, then drops
// the cache entry: an increment racing it lands before it (and is reset)
// or after it (and counts), never lost. In write-behind mode Reset first
// flushes, so increments made before it are not applied after it.
//
// # Reconcile
//
// Reconcile recomputes one counter for every entity of a kind from a
// Source the app supplies (its own tables are the truth), writes only the
// entities that drifted — an atomic add of the difference, under the rows'
// locks — drops their cache entries, and reports each fix as (kind, id,
// field, was, now). Entities with a stored value the Source does not list
// are corrected to 0.
//
// # Start-up and background work
//
// New does no I/O. It starts one goroutine, which sleeps until its first
// tick: every FlushInterval it probes Redis if it is down, sweeps stale
// entries and flushes; every BufferInterval it writes buffered deltas;
// every FoldInterval it folds hot slots, prunes batch ids older than a
// week and, with InactiveAfter, old read marks. Migrate creates the
// tables, then finishes any flush a previous process left half done and
// sweeps stale entries, so call it before serving. Close stops the
// goroutine and flushes what is pending. Background errors go to
// Config.OnError.
//
// # Where the code is
//
// counters.go holds New, Migrate and the background loop; read.go and
// write.go the public reads and writes; layout.go the script calls of the
// cache layouts. Each consistency scheme has one
// file: lease.go (leases and write marks), behind.go (write-behind
// epochs and batches), outage.go (the stale table and the probe), hot.go
// (hot slots), buffer.go (buffered fields); reconcile.go and unread.go
// sit on top. The SQL of every dialect is in internal/sqlstore, the Lua
// scripts and key names in internal/redisstore.
package entity
