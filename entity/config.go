package entity

import (
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/ratelog"
)

// Dialect names the SQL flavour of Config.DB.
type Dialect string

const (
	// MySQL is MySQL or MariaDB through github.com/go-sql-driver/mysql.
	MySQL Dialect = "mysql"
	// SQLite is SQLite through modernc.org/sqlite (driver name "sqlite").
	SQLite Dialect = "sqlite"
)

// Defaults for Config's zero fields, and limits.
const (
	DefaultTable         = "pulse_counters"
	DefaultTTL           = 12 * time.Hour
	DefaultFlushInterval = time.Second
	DefaultFoldInterval  = time.Minute
	DefaultCacheTimeout  = time.Second
	// MaxBatchIDs is the most ids one BatchGet accepts.
	MaxBatchIDs = 1000
	// MaxTop is the largest n Top accepts.
	MaxTop = 1000
	// MaxHotSlots bounds Kind.Hot.
	MaxHotSlots = 1024
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
	Pool *redis.Pool
	// Kinds declares every kind and its fields; required.
	Kinds []Kind
	// Prefix goes before every Redis key. Counters sharing a Redis must
	// either share Prefix and Table or differ in Prefix.
	Prefix string
	// Table is the SQL table (default "pulse_counters"); two more are made
	// next to it, with the suffixes _batches and _stale.
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
	// OnError receives errors of background work and of cache calls that
	// SQL covered for; nil logs them with log/slog, at most one line every
	// 10 s.
	OnError func(error)

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
}

var (
	namePattern  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	tablePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,54}$`)
)

// kindSpec is a validated Kind.
type kindSpec struct {
	name   string
	fields []string
	index  map[string]int // field -> position in fields
	slots  []int          // per field: SQL slot rows, 1 for ordinary fields
	hot    []string       // hot fields, in declaration order
}

func (cfg *Config) validate() (map[string]*kindSpec, []string, error) {
	if cfg.DB == nil {
		return nil, nil, errors.New("entity: Config.DB is nil")
	}
	if cfg.Dialect != MySQL && cfg.Dialect != SQLite {
		return nil, nil, fmt.Errorf("entity: Config.Dialect %q is neither %q nor %q", cfg.Dialect, MySQL, SQLite)
	}
	if cfg.Table == "" {
		cfg.Table = DefaultTable
	}
	if !tablePattern.MatchString(cfg.Table) {
		return nil, nil, fmt.Errorf("entity: Config.Table %q is not a plain identifier of at most 55 bytes", cfg.Table)
	}
	if cfg.TTL < 0 || cfg.FlushInterval < 0 || cfg.FoldInterval < 0 || cfg.CacheTimeout < 0 {
		return nil, nil, errors.New("entity: negative TTL, FlushInterval, FoldInterval or CacheTimeout")
	}
	if cfg.TTL != 0 && cfg.TTL < time.Second {
		return nil, nil, errors.New("entity: Config.TTL below 1 s")
	}
	if cfg.WriteBehind && cfg.Pool == nil {
		return nil, nil, errors.New("entity: Config.WriteBehind needs Config.Pool")
	}
	if len(cfg.Kinds) == 0 {
		return nil, nil, errors.New("entity: Config.Kinds is empty")
	}
	kinds := map[string]*kindSpec{}
	var order []string
	for _, k := range cfg.Kinds {
		if !namePattern.MatchString(k.Name) {
			return nil, nil, fmt.Errorf("entity: kind name %q: want a lower-case letter, then letters, digits or _, at most 64 bytes", k.Name)
		}
		if _, dup := kinds[k.Name]; dup {
			return nil, nil, fmt.Errorf("entity: kind %q declared twice", k.Name)
		}
		if len(k.Fields) == 0 {
			return nil, nil, fmt.Errorf("entity: kind %q has no fields", k.Name)
		}
		spec := &kindSpec{name: k.Name, index: map[string]int{}}
		for _, f := range k.Fields {
			if !namePattern.MatchString(f) {
				return nil, nil, fmt.Errorf("entity: kind %q: field name %q: want a lower-case letter, then letters, digits or _, at most 64 bytes", k.Name, f)
			}
			if _, dup := spec.index[f]; dup {
				return nil, nil, fmt.Errorf("entity: kind %q: field %q declared twice", k.Name, f)
			}
			spec.index[f] = len(spec.fields)
			spec.fields = append(spec.fields, f)
			spec.slots = append(spec.slots, 1)
		}
		for f, n := range k.Hot {
			i, ok := spec.index[f]
			if !ok {
				return nil, nil, fmt.Errorf("entity: kind %q: hot field %q is not declared", k.Name, f)
			}
			if n < 2 || n > MaxHotSlots {
				return nil, nil, fmt.Errorf("entity: kind %q: hot field %q: %d slots, want 2 to %d", k.Name, f, n, MaxHotSlots)
			}
			spec.slots[i] = n
		}
		for i, f := range spec.fields {
			if spec.slots[i] > 1 {
				spec.hot = append(spec.hot, f)
			}
		}
		kinds[k.Name] = spec
		order = append(order, k.Name)
	}
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
	if cfg.OnError == nil {
		cfg.OnError = ratelog.New("pulse: entity counters", 10*time.Second)
	}
	return kinds, order, nil
}
