package fromstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries"
)

// DefaultSettle is Scanner.Settle when left zero: a few of a recorder's
// flush intervals (timeseries.DefaultFlushInterval).
const DefaultSettle = 5 * time.Second

// Scanner fits many series again and again, as a dashboard or an alert
// loop scanning for anomalies does. The 1 h and 1 d series a scan below
// them borrows from change only when one of their buckets closes, so a
// Scanner reads each of them once per closed bucket, not once per scan:
// a scan every 5 s reads the series' own precision from Redis, and the
// coarser ones once an hour and once a day.
//
// What it keeps is the closed buckets of the 1 h and 1 d series of the
// names it was asked for since their bucket in progress began: at most
// one 1 h and one 1 d series per name, dropped when that bucket closes.
// It keeps too, for each series it fits, the score of each bucket of the
// window when the bucket was first seen settled (closed for Settle), and
// the incidents it reported: a settled bucket scores the same on every
// scan, though the window slides and the fit's parameters with it, and an
// incident keeps the start it was first reported with. Counts flushed
// into a bucket later than Settle after it closed (a flush retried
// through an outage) do not move its kept score.
//
// A Scanner is safe for concurrent use. Its zero value is not usable:
// Store must be set.
type Scanner struct {
	// Store is where the series are read.
	Store *timeseries.Store
	// Settle is how long after a bucket closes its last counts may still
	// land: the recorder's flush interval and a margin. A 1 h or 1 d
	// series read sooner than Settle after its last bucket closed is read
	// again once Settle has passed. Counts held back longer (a flush
	// retried through an outage) reach the scans from the next closed
	// bucket on. Zero means DefaultSettle; negative, no wait.
	Settle time.Duration
	// Keep, when true, keeps each settled bucket's score and each
	// incident in Redis beside the series (docs/forecasts.md lists the
	// keys): every Scanner on that Redis, now or after a restart, then
	// gives a bucket one score, and Incidents lists each incident once.
	// At 1 h it keeps each series' Week there too (Weeks), which lends
	// the fit the shape of each day of the week once it is ready.
	// False keeps them in this Scanner only, and writes nothing.
	Keep bool
	// App names the app in the incidents it records; empty leaves it so.
	App string
	// OnError receives the failures of Keep's writes, which do not fail a
	// scan (what failed is sent again with the next one); nil drops them.
	OnError func(error)

	mu       sync.Mutex
	conns    *redisconn.Router
	lends    map[int]*lent               // by precision: 1 h, 1 d
	mems     map[int]*memory             // by precision: what earlier scans saw
	contexts map[string]forecast.Context // by precision and name: the shapes lent, fitted once
	weekOf   map[string]*forecast.Week   // by name: its shape over the week, from its 1 h series
}

// lent is the closed buckets of the series one precision lends, read
// while the bucket current began was in progress.
type lent struct {
	current int64     // start of the bucket in progress when read
	until   time.Time // when a read of them is due again
	series  map[string]*forecast.Series
}

// FitAll is the package's FitAll, with the 1 h and 1 d series read once
// per closed bucket of theirs.
func (sc *Scanner) FitAll(ctx context.Context, names []string, precision int, cfg forecast.Config) (map[string]Result, error) {
	if cfg.Kind != forecast.Counts {
		return nil, fmt.Errorf("forecast: the store holds counts, not %v", cfg.Kind)
	}
	if sc.Store == nil {
		return nil, fmt.Errorf("forecast: a Scanner without a Store")
	}
	got, err := readLast(ctx, sc.Store, names, []int{precision}, Window+1)
	if err != nil {
		return nil, err
	}
	known := make([]string, 0, len(got))
	for name := range got {
		known = append(known, name)
	}
	var hourly, daily map[string]*forecast.Series
	if precision < hour {
		if hourly, err = sc.lent(ctx, known, hour); err != nil {
			return nil, err
		}
	}
	if precision < day {
		if daily, err = sc.lent(ctx, known, day); err != nil {
			return nil, err
		}
	}
	own := make(map[string]forecast.Series, len(got))
	for name, byPrecision := range got {
		own[name] = closed(name, precision, byPrecision[precision])
	}
	var weeks map[string]*forecast.Week
	if precision == hour {
		weeks = sc.weeks(ctx, own)
	}
	out := make(map[string]Result, len(got))
	mem, settledBy := sc.memoryOf(precision), sc.settledBy(precision, sc.Store.Clock().Now())
	for name, s := range own {
		c := cfg
		c.Context = sc.context(precision, name, hourly[name], daily[name], weeks[name])
		fd, err := forecast.FitWithConfig(s, c)
		out[name] = Result{Fitted: fd, Err: err}
	}
	if sc.Keep {
		sc.report(sc.shareScores(ctx, precision, mem, out, settledBy))
	}
	for name, r := range out {
		mem.keep(name, r.Fitted, settledBy)
	}
	if sc.Keep {
		sc.report(sc.record(ctx, precision, cfg, mem, out, settledBy))
	}
	return out, nil
}

// report hands err, if any, to OnError.
func (sc *Scanner) report(err error) {
	if err != nil && sc.OnError != nil {
		sc.OnError(err)
	}
}

// router is the Router the Scanner writes through, made once.
func (sc *Scanner) router() *redisconn.Router {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.conns == nil {
		sc.conns = redisconn.NewRouter(sc.Store.Pool())
	}
	return sc.conns
}

// context is the Context of name at precision p, its shapes fitted once
// for as long as its 1 h and 1 d series and its Week are the ones read.
func (sc *Scanner) context(p int, name string, hourly, daily *forecast.Series, week *forecast.Week) forecast.Context {
	key := strconv.Itoa(p) + ":" + name
	sc.mu.Lock()
	cx, ok := sc.contexts[key]
	sc.mu.Unlock()
	if ok && cx.Hourly == hourly && cx.Daily == daily && cx.Week == week {
		return cx
	}
	cx = forecast.Context{Hourly: hourly, Daily: daily, Week: week}.Prepare(forecast.Counts)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.contexts == nil {
		sc.contexts = make(map[string]forecast.Context)
	}
	sc.contexts[key] = cx
	return cx
}

// memoryOf is what the Scanner keeps of its scans at precision p.
func (sc *Scanner) memoryOf(p int) *memory {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.mems == nil {
		sc.mems = make(map[int]*memory)
	}
	m := sc.mems[p]
	if m == nil {
		m = &memory{}
		sc.mems[p] = m
	}
	return m
}

// SettledBy is the start of the newest bucket at precision p (seconds)
// whose counts are in at now: closed for Settle. It is the bucket an
// alert on the scans judges.
func (sc *Scanner) SettledBy(p int, now time.Time) time.Time {
	return sc.settledBy(p, now)
}

// settledBy is SettledBy.
func (sc *Scanner) settledBy(p int, now time.Time) time.Time {
	last := timeseries.BucketStart(now.Unix(), p) - int64(p)
	if now.Before(time.Unix(last+int64(p), 0).Add(sc.settle())) {
		last -= int64(p)
	}
	return time.Unix(last, 0).UTC()
}

// lent returns the closed buckets of names at precision p, read from
// Redis only for the names not read since p's bucket in progress began
// (or since Settle after it began, for those read sooner). A name p does
// not hold maps to nil. The series returned are shared: fits only read
// them.
func (sc *Scanner) lent(ctx context.Context, names []string, p int) (map[string]*forecast.Series, error) {
	if !slices.Contains(sc.Store.Schema().Precisions, p) {
		return nil, nil
	}
	l, missing := sc.lookup(names, p)
	if len(missing) > 0 {
		got, err := readLast(ctx, sc.Store, missing, []int{p}, Window+1)
		if err != nil {
			return nil, err
		}
		sc.mu.Lock()
		for _, name := range missing {
			var s *forecast.Series
			if samples, ok := got[name][p]; ok {
				c := closed(name, p, samples)
				s = &c
			}
			l.series[name] = s
		}
		sc.mu.Unlock()
	}
	out := make(map[string]*forecast.Series, len(names))
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, name := range names {
		out[name] = l.series[name]
	}
	return out, nil
}

// lookup returns the lent series of p still current, begun anew if due,
// and the names it does not hold yet.
func (sc *Scanner) lookup(names []string, p int) (*lent, []string) {
	now := sc.Store.Clock().Now()
	current := timeseries.BucketStart(now.Unix(), p)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	l := sc.lends[p]
	if l == nil || l.current != current || !now.Before(l.until) {
		settled := time.Unix(current, 0).Add(sc.settle())
		until := time.Unix(current+int64(p), 0)
		if now.Before(settled) {
			until = settled // the last closed bucket may still be filling
		}
		l = &lent{current: current, until: until, series: make(map[string]*forecast.Series, len(names))}
		sc.contexts = nil // their shapes were fitted from the series read before
		if sc.lends == nil {
			sc.lends = make(map[int]*lent, 2)
		}
		sc.lends[p] = l
	}
	var missing []string
	for _, name := range names {
		if _, ok := l.series[name]; !ok {
			missing = append(missing, name)
		}
	}
	return l, missing
}

// settle is Settle, or its default.
func (sc *Scanner) settle() time.Duration { return cmp.Or(sc.Settle, DefaultSettle) }
