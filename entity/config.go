package entity

import (
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/pulse-dev/pulse/entity/internal/redisstore"
	"github.com/pulse-dev/pulse/entity/internal/sqlstore"
	"github.com/pulse-dev/pulse/internal/ratelog"
	"github.com/pulse-dev/pulse/internal/redisconn"
)

// Pool hands out Redis connections: a *redis.Pool (one server) or a
// *redisc.Cluster (Redis Cluster) both satisfy it.
type Pool = redisconn.Pool

// Dialect names the SQL flavour of Config.DB.
type Dialect string

const (
	// MySQL is MySQL or MariaDB through github.com/go-sql-driver/mysql.
	MySQL Dialect = "mysql"
	// SQLite is SQLite through modernc.org/sqlite (driver name "sqlite").
	SQLite Dialect = "sqlite"
	// Postgres is PostgreSQL through github.com/jackc/pgx/v5/stdlib
	// (driver name "pgx").
	Postgres Dialect = "postgres"
)

// Defaults for Config's zero fields, and limits.
const (
	DefaultTable         = "pulse_counters"
	DefaultTTL           = 12 * time.Hour
	DefaultFlushInterval = time.Second
	DefaultFoldInterval  = time.Minute
	DefaultCacheTimeout  = time.Second
	// DefaultStatementTimeout bounds one SQL statement (with its retries).
	DefaultStatementTimeout = 2 * time.Second
	// DefaultBufferInterval is how often buffered fields are flushed.
	DefaultBufferInterval = time.Second
	// DefaultMaxFollowees bounds the followees one feed read sums.
	DefaultMaxFollowees = 2000
	// MaxBatchIDs is the most ids one BatchGet accepts.
	MaxBatchIDs = 1000
	// MaxTop is the largest n Top accepts.
	MaxTop = 1000
	// MaxHotSlots bounds Kind.Hot.
	MaxHotSlots = 1024
	// DefaultPopulation is Kind.Population when it is 0.
	DefaultPopulation = 1_000_000
	// MaxPopulation bounds Kind.Population.
	MaxPopulation = 1 << 40
	// MaxDelta bounds the size of one increment. A cold cache is told apart
	// from a warm one by the offset its values carry; a single delta this
	// large could blur the two.
	MaxDelta = 1 << 38
)

// Kind declares one kind of entity and its counters.
type Kind struct {
	// Name is the kind, e.g. "user" or "post": a lower-case letter, then
	// letters, digits or underscores, at most 64 bytes.
	Name string
	// Fields are the kind's counters, in declaration order, named like
	// kinds. Counts of entities nobody touched are 0.
	Fields []string
	// Hot maps a field to the number of SQL rows (slots, at least 2) its
	// value is spread over, so that concurrent writers to one entity do not
	// queue on one row lock. Optional.
	Hot map[string]int
	// Buffered fields are aggregated in the process (an atomic add per
	// increment, no Redis and no SQL on the request path) and written
	// through the durable path about once per Config.BufferInterval. A
	// crash loses at most one interval of them; Close flushes. Reads in the
	// same process include the deltas not yet written.
	Buffered []string
	// Population is about how many entities of the kind the cache holds
	// at once: those read or written within the last TTL. LayoutSparse
	// sizes the kind's buckets from it (0 means DefaultPopulation); the
	// other layouts ignore it. A population well above it leaves buckets
	// too full for Redis's compact encoding (reported once to
	// Config.OnError), one well below it leaves them nearly empty: either
	// way memory per entity grows toward LayoutHash's, and the counts stay
	// exact. Changing it renames the kind's buckets, as switching layouts
	// does.
	Population int64
}

// Config configures Counters. Zero fields take the defaults.
type Config struct {
	// DB is the SQL database the counts live in; required.
	DB *sql.DB
	// Dialect is DB's flavour; required.
	Dialect Dialect
	// Pool is the Redis cache; nil means SQL only. Give it short dial, read
	// and write timeouts: a Redis outage then costs a bounded wait before
	// the counters fall back to SQL.
	Pool Pool
	// Kinds declares every kind and its fields; required.
	Kinds []Kind
	// Prefix goes before every Redis key. Counters sharing a Redis must
	// either share Prefix and Table or differ in Prefix.
	Prefix string
	// Table is the SQL table (default "pulse_counters"); Migrate makes four
	// more next to it, with the suffixes _batches, _stale, _seqs and
	// _marks.
	Table string
	// TTL is how long a cached entity lives (default 12 h), counted from
	// the read that warmed it.
	TTL time.Duration
	// WriteBehind writes increments to Redis first and persists them to SQL
	// in batches, every FlushInterval. Meant for very hot counters; see the
	// package documentation for what it trades.
	WriteBehind bool
	// FlushInterval is the write-behind flush period (default 1 s). It also
	// paces the background sweep of stale cache entries and, while Redis is
	// down, the probe that notices it is back.
	FlushInterval time.Duration
	// FoldInterval is how often hot fields' slots are folded back into one
	// row (default 1 min).
	FoldInterval time.Duration
	// CacheTimeout bounds one Redis call (default 1 s); past it the call
	// counts as failed and SQL answers.
	CacheTimeout time.Duration
	// StatementTimeout bounds every SQL statement, retries included
	// (default 2 s). Past it the call fails with ErrUnavailable. With SQLite
	// give the driver a busy timeout no longer than this.
	StatementTimeout time.Duration
	// BufferInterval is how often buffered fields are flushed (default 1 s):
	// the most a crash can lose of them.
	BufferInterval time.Duration
	// InactiveAfter is how long a user's read marks (notices, feed, red
	// dot) are kept after their last visit (default 0: forever).
	// PruneInactive drops older ones; such users then read as having read
	// everything.
	InactiveAfter time.Duration
	// MaxFollowees bounds how many followees one feed read sums (default
	// 2000): one batch read of their post counts.
	MaxFollowees int
	// OnError receives errors of background work and of cache calls that
	// SQL covered for; nil logs them with log/slog, at most one line every
	// 10 s.
	OnError func(error)
	// Clock tells the time of notices, red dots, read marks, flushed
	// batches and pruning, and the compact layout's generations; nil means
	// the system clock. A timeseries.ManualClock will do.
	Clock Clock
	// Layout is how the cache keeps entities: LayoutHash (the default, a
	// hash per entity), LayoutCompact (buckets of consecutive ids, a
	// packed value each: a fraction of the memory, for ids handed out
	// densely) or LayoutSparse (the same buckets addressed by a hash of
	// the id, for ids of any shape). All processes sharing a Prefix must
	// use the same layout; switching layouts means a new Prefix (the old
	// keys expire on their own).
	Layout Layout

	hooks hooks // test instrumentation
}

// hooks let tests stop the code at the points where races and crashes
// matter. All nil in production.
type hooks struct {
	// afterLoad runs after a read loaded cold entities from SQL and before
	// it tries to warm the cache with them.
	afterLoad func(kind string, ids []int64)
	// afterSQLWrite runs after a write-through increment reached SQL and
	// before it updates the cache.
	afterSQLWrite func(kind string, id int64)
	// flushStep runs after each step of a flush; an error stops the flush
	// right there, as if the process had died.
	flushStep func(step flushStep) error
	// bufferedApply runs before a buffered batch is written, and
	// bufferedCommitted after it committed; an error makes the flush fail
	// there, as a lost reply would.
	bufferedApply     func(batch string) error
	bufferedCommitted func(batch string) error
}

var (
	namePattern  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	tablePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,54}$`)
)

// kindSpec is a validated Kind.
type kindSpec struct {
	name   string
	fields []string
	index  map[string]int  // field -> position in fields
	slots  []int           // per field: SQL slot rows, 1 for ordinary fields
	hot    []string        // hot fields, in declaration order
	buffer []bool          // per field: increments aggregated in process
	turn   []atomic.Uint64 // per hot field: the next slot, round robin

	buckets uint64      // LayoutSparse's bucket count
	crowded atomic.Bool // a sparse bucket outgrew the listpack encoding (reported)
}

// Bind rewrites a query written with ? placeholders for d: PostgreSQL
// numbers them ($1, $2...), the others keep ?. The query must hold no
// other question marks.
func (d Dialect) Bind(query string) string { return sqlstore.Bind(sqlstore.Dialect(d), query) }

// Clock tells the time; timeseries.Clock has the same shape, so a
// timeseries.ManualClock drives tests.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (cfg *Config) validate() (map[string]*kindSpec, []string, error) {
	if err := cfg.validateStores(); err != nil {
		return nil, nil, err
	}
	if len(cfg.Kinds) == 0 {
		return nil, nil, errors.New("entity: Config.Kinds is empty")
	}
	kinds := map[string]*kindSpec{}
	var order []string
	for _, k := range cfg.Kinds {
		if _, dup := kinds[k.Name]; dup {
			return nil, nil, fmt.Errorf("entity: kind %q declared twice", k.Name)
		}
		spec, err := newKindSpec(k)
		if err != nil {
			return nil, nil, err
		}
		kinds[k.Name] = spec
		order = append(order, k.Name)
	}
	if err := cfg.validateLayout(); err != nil {
		return nil, nil, err
	}
	cfg.setDefaults()
	return kinds, order, nil
}

// validateStores checks the database, table, durations and cache mode.
func (cfg *Config) validateStores() error {
	if cfg.DB == nil {
		return errors.New("entity: Config.DB is nil")
	}
	if cfg.Dialect != MySQL && cfg.Dialect != SQLite && cfg.Dialect != Postgres {
		return fmt.Errorf("entity: Config.Dialect %q is not %q, %q or %q", cfg.Dialect, MySQL, SQLite, Postgres)
	}
	if cfg.Table == "" {
		cfg.Table = DefaultTable
	}
	if !tablePattern.MatchString(cfg.Table) {
		return fmt.Errorf("entity: Config.Table %q is not a plain identifier of at most 55 bytes", cfg.Table)
	}
	if cfg.TTL < 0 || cfg.FlushInterval < 0 || cfg.FoldInterval < 0 || cfg.CacheTimeout < 0 ||
		cfg.StatementTimeout < 0 || cfg.BufferInterval < 0 || cfg.InactiveAfter < 0 || cfg.MaxFollowees < 0 {
		return errors.New("entity: negative TTL, FlushInterval, FoldInterval, CacheTimeout, StatementTimeout, BufferInterval, InactiveAfter or MaxFollowees")
	}
	if cfg.TTL != 0 && cfg.TTL < time.Second {
		return errors.New("entity: Config.TTL below 1 s")
	}
	if cfg.WriteBehind && cfg.Pool == nil {
		return errors.New("entity: Config.WriteBehind needs Config.Pool")
	}
	if _, cluster := redisconn.Cluster(cfg.Pool); cluster && cfg.WriteBehind {
		// Its pending and flushing hashes span every entity: one slot.
		return errors.New("entity: Config.WriteBehind is not supported on Redis Cluster; use Kind.Buffered for hot fields")
	}
	return nil
}

// newKindSpec validates one kind.
func newKindSpec(k Kind) (*kindSpec, error) {
	if !namePattern.MatchString(k.Name) {
		return nil, fmt.Errorf("entity: kind name %q: want a lower-case letter, then letters, digits or _, at most 64 bytes", k.Name)
	}
	if len(k.Fields) == 0 {
		return nil, fmt.Errorf("entity: kind %q has no fields", k.Name)
	}
	buckets, err := sparseBuckets(k)
	if err != nil {
		return nil, err
	}
	spec := &kindSpec{name: k.Name, index: map[string]int{}, buckets: buckets}
	for _, f := range k.Fields {
		if !namePattern.MatchString(f) {
			return nil, fmt.Errorf("entity: kind %q: field name %q: want a lower-case letter, then letters, digits or _, at most 64 bytes", k.Name, f)
		}
		if _, dup := spec.index[f]; dup {
			return nil, fmt.Errorf("entity: kind %q: field %q declared twice", k.Name, f)
		}
		spec.index[f] = len(spec.fields)
		spec.fields = append(spec.fields, f)
		spec.slots = append(spec.slots, 1)
		spec.buffer = append(spec.buffer, false)
	}
	for _, f := range k.Buffered {
		i, ok := spec.index[f]
		if !ok {
			return nil, fmt.Errorf("entity: kind %q: buffered field %q is not declared", k.Name, f)
		}
		if spec.buffer[i] {
			return nil, fmt.Errorf("entity: kind %q: buffered field %q listed twice", k.Name, f)
		}
		spec.buffer[i] = true
	}
	for f, n := range k.Hot {
		i, ok := spec.index[f]
		if !ok {
			return nil, fmt.Errorf("entity: kind %q: hot field %q is not declared", k.Name, f)
		}
		if n < 2 || n > MaxHotSlots {
			return nil, fmt.Errorf("entity: kind %q: hot field %q: %d slots, want 2 to %d", k.Name, f, n, MaxHotSlots)
		}
		spec.slots[i] = n
	}
	spec.turn = make([]atomic.Uint64, len(spec.fields))
	for i := range spec.turn {
		spec.turn[i].Store(rand.Uint64())
	}
	for i, f := range spec.fields {
		if spec.slots[i] > 1 {
			spec.hot = append(spec.hot, f)
		}
	}
	return spec, nil
}

// sparseBuckets checks Kind.Population and sizes the kind's buckets.
func sparseBuckets(k Kind) (uint64, error) {
	if k.Population < 0 || k.Population > MaxPopulation {
		return 0, fmt.Errorf("entity: kind %q: Population %d, want 0 (the default, %d) to %d", k.Name, k.Population, DefaultPopulation, int64(MaxPopulation))
	}
	if k.Population == 0 {
		return redisstore.SparseBuckets(DefaultPopulation), nil
	}
	return redisstore.SparseBuckets(k.Population), nil
}

// setDefaults fills the zero fields, the clock included: set once here,
// so no call checks it for nil.
func (cfg *Config) setDefaults() {
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	if cfg.FoldInterval == 0 {
		cfg.FoldInterval = DefaultFoldInterval
	}
	if cfg.CacheTimeout == 0 {
		cfg.CacheTimeout = DefaultCacheTimeout
	}
	if cfg.StatementTimeout == 0 {
		cfg.StatementTimeout = DefaultStatementTimeout
	}
	if cfg.BufferInterval == 0 {
		cfg.BufferInterval = DefaultBufferInterval
	}
	if cfg.MaxFollowees == 0 {
		cfg.MaxFollowees = DefaultMaxFollowees
	}
	if cfg.OnError == nil {
		cfg.OnError = ratelog.New("pulse: entity counters", 10*time.Second)
	}
	if cfg.Clock == nil {
		cfg.Clock = systemClock{}
	}
}
