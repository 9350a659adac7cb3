package dashboard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	entity "github.com/pulse-dev/pulse/internal/entityapi"
	"github.com/pulse-dev/pulse/internal/seriesname"
	"github.com/pulse-dev/pulse/timeseries"
)

// HealthReporter reports the state of whatever writes the series;
// *timeseries.Recorder satisfies it.
type HealthReporter interface{ Health() timeseries.Health }

// Entities reads entity counters; the entity package's *entity.Counters
// satisfies it. Its types are those of package entity (entity.KindInfo,
// entity.Counts, entity.Ranked), declared where the dashboard can name
// them without depending on the entity module.
type Entities interface {
	Kinds() []entity.KindInfo
	Get(ctx context.Context, kind string, id int64) (entity.Counts, error)
	// BatchGet returns the counts in the same order as ids.
	BatchGet(ctx context.Context, kind string, ids []int64) ([]entity.Counts, error)
	Top(ctx context.Context, kind, field string, n int) ([]entity.Ranked, error)
}

// Defaults and bounds of Config and of the API.
const (
	DefaultTitle        = "Pulse"
	DefaultPollInterval = 5 * time.Second
	DefaultOverview     = 6
	DefaultTimeout      = 5 * time.Second
	// MinPollInterval bounds how hard one open page may poll.
	MinPollInterval = 250 * time.Millisecond
	// MaxOverview bounds the busiest series charted at once.
	MaxOverview = 24
	// MaxPinned bounds the series one overview request may name.
	MaxPinned = 24
	// MaxIDs bounds the ids of one entity batch read.
	MaxIDs = 1000
	// MaxTop bounds n of an entity top list.
	MaxTop = 100
	// DefaultMaxBuckets is the widest window a read may zero-fill: the
	// samples the cleaner keeps by default (cleaner.Config.Samples).
	DefaultMaxBuckets = 120
	// MaxMaxBuckets bounds Config.MaxBuckets.
	MaxMaxBuckets = 2000
	// DefaultConcurrentReads is how many series reads run at once.
	DefaultConcurrentReads = 4
	// DefaultStaleFlushes is how many flush intervals may pass without a
	// flush, while hits are pending, before api/health answers 503.
	DefaultStaleFlushes = 3
)

// Config configures the dashboard. Zero fields take the defaults.
type Config struct {
	// Store reads the series; required. Its clock decides the current
	// (still open) bucket.
	Store *timeseries.Store
	// Health, when set, feeds the status strip and GET api/health.
	Health HealthReporter
	// Entities, when set, adds the entity panel and the api/entities
	// endpoints.
	Entities Entities
	// Alerts, when set, serves GET api/alerts and the page's alert
	// banner: the alert package's Evaluator.Handler() is meant here. Nil
	// means no alerts are shown and api/alerts answers 404 with a JSON
	// error. The dashboard passes the request on as it came (its query
	// included), bounded by Timeout.
	Alerts http.Handler
	// Labels, when set, names entities for people: the top list shows
	// "hello world" (#3) rather than #3. It gets the ids of one kind in one
	// call and may leave ids out; an error leaves the list unlabelled.
	Labels func(ctx context.Context, kind string, ids []int64) (map[int64]string, error)
	// Title heads the page (default "Pulse").
	Title string
	// VisitorsSeries is the series whose unique visitors the page shows
	// beside its hits (default "hits", the middlewares' default HitsName):
	// an app that renamed its middleware's HitsName names it here too.
	VisitorsSeries string
	// PollInterval is how often an open page refreshes (default 5 s, at
	// least MinPollInterval).
	PollInterval time.Duration
	// Overview is how many of the busiest series the page charts
	// (default 6, at most MaxOverview).
	Overview int
	// Timeout bounds the Redis and entity reads of one request
	// (default 5 s).
	Timeout time.Duration
	// Echarts is the app's own copy of echarts.min.js (for instance
	// embedded with //go:embed from the app's npm step), served by the
	// dashboard so the page needs no internet. Without it, and without
	// the copy `make assets` embeds in a build of this repository, the
	// page loads echarts EchartsVersion from EchartsCDN, checked against
	// EchartsIntegrity.
	Echarts []byte
	// MaxBuckets bounds the buckets of one read: last=N of the API and
	// the zero-filled range of from/to (default DefaultMaxBuckets, the
	// samples the cleaner keeps; at most MaxMaxBuckets). Raise it with
	// cleaner.Config.Samples.
	MaxBuckets int
	// ConcurrentReads bounds the series reads served at once; others
	// wait for a turn within Timeout, then answer 503 (default 4). It
	// keeps the memory of many heavy reads at once bounded.
	ConcurrentReads int
	// FlushInterval is the recorder's flush interval: api/health answers
	// 503 when no flush succeeded for DefaultStaleFlushes intervals while
	// hits are pending. By default it is what Health reports
	// (timeseries.Health.FlushInterval), else 1 s, the recorder's
	// default.
	FlushInterval time.Duration
	// Logger receives the details of failures, which clients only see
	// as a generic text (default slog.Default()).
	Logger *slog.Logger
}

func (cfg Config) withDefaults() (Config, error) {
	if cfg.Store == nil {
		return cfg, errors.New("dashboard: Config.Store is nil")
	}
	if cfg.Title == "" {
		cfg.Title = DefaultTitle
	}
	if cfg.VisitorsSeries == "" {
		cfg.VisitorsSeries = seriesname.Hits // every shipped adapter counts each request in it, by default
	} else if err := timeseries.ValidateName(cfg.VisitorsSeries); err != nil {
		return cfg, fmt.Errorf("dashboard: VisitorsSeries: %w", err)
	}
	switch {
	case cfg.PollInterval == 0:
		cfg.PollInterval = DefaultPollInterval
	case cfg.PollInterval < MinPollInterval:
		return cfg, fmt.Errorf("dashboard: PollInterval %v is below %v", cfg.PollInterval, MinPollInterval)
	}
	switch {
	case cfg.Overview == 0:
		cfg.Overview = DefaultOverview
	case cfg.Overview < 0 || cfg.Overview > MaxOverview:
		return cfg, fmt.Errorf("dashboard: Overview %d is outside 1..%d", cfg.Overview, MaxOverview)
	}
	switch {
	case cfg.Timeout == 0:
		cfg.Timeout = DefaultTimeout
	case cfg.Timeout < 0:
		return cfg, fmt.Errorf("dashboard: negative Timeout %v", cfg.Timeout)
	}
	switch {
	case cfg.MaxBuckets == 0:
		cfg.MaxBuckets = DefaultMaxBuckets
	case cfg.MaxBuckets < 0 || cfg.MaxBuckets > MaxMaxBuckets:
		return cfg, fmt.Errorf("dashboard: MaxBuckets %d is outside 1..%d", cfg.MaxBuckets, MaxMaxBuckets)
	}
	switch {
	case cfg.ConcurrentReads == 0:
		cfg.ConcurrentReads = DefaultConcurrentReads
	case cfg.ConcurrentReads < 0:
		return cfg, fmt.Errorf("dashboard: negative ConcurrentReads %d", cfg.ConcurrentReads)
	}
	switch {
	case cfg.FlushInterval == 0:
		// Left 0: the health check takes the recorder's own.
	case cfg.FlushInterval < 0:
		return cfg, fmt.Errorf("dashboard: negative FlushInterval %v", cfg.FlushInterval)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg, nil
}
