package fromstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries"
)

// WeekTTL is how long a series' Week outlives its last update: a series
// that stops being scanned has its Week removed, as the cleaner removes
// its buckets.
const WeekTTL = 35 * 24 * time.Hour

// WeekKey is the key holding the forecast.Week of series name: a string
// of its binary encoding, beside the series' count hashes, whose schema
// it leaves as it is.
func WeekKey(schema timeseries.Schema, name string) string {
	return schema.Prefix + "pulse:week:" + name
}

// Weeks keeps each series' forecast.Week in Redis, so that it survives
// restarts and every instance scanning the same Redis shares it. Folding
// the same closed hours twice changes nothing, so instances that update
// a Week at once write the same value.
type Weeks struct {
	// Store is where the series are, and their Weeks.
	Store *timeseries.Store
	// Timeout bounds each call to Redis; zero means 2 s.
	Timeout time.Duration
}

// Load reads the Weeks of names, with one pipeline per Redis node. A name
// without a Week, or whose bytes are not one, gets an empty Week.
func (ws Weeks) Load(ctx context.Context, names []string) (map[string]*forecast.Week, error) {
	schema := ws.Store.Schema()
	cmds := make([]redisconn.Cmd, len(names))
	for i, name := range names {
		k := WeekKey(schema, name)
		cmds[i] = redisconn.Cmd{Key: k, Name: "GET", Args: []any{k}}
	}
	out := make(map[string]*forecast.Week, len(names))
	for i, r := range ws.router().DoContext(ctx, cmds, redisconn.Options{Timeout: ws.Timeout}) {
		w := new(forecast.Week)
		out[names[i]] = w
		b, err := redis.Bytes(r.Value, r.Err)
		switch {
		case errors.Is(err, redis.ErrNil):
		case err != nil:
			return nil, fmt.Errorf("forecast: read the week of %q: %w", names[i], err)
		default:
			if w.UnmarshalBinary(b) != nil {
				*w = forecast.Week{} // an older encoding: begin again
			}
		}
	}
	return out, nil
}

// Update folds the closed 1 h buckets of each series of hourly into its
// Week in weeks (a name missing from weeks begins an empty one) and
// writes the Weeks that changed, with one pipeline per Redis node. It
// returns how many were written.
func (ws Weeks) Update(ctx context.Context, weeks map[string]*forecast.Week, hourly map[string]*forecast.Series) (int, error) {
	schema := ws.Store.Schema()
	var cmds []redisconn.Cmd
	var changed []string
	for name, s := range hourly {
		if s == nil {
			continue
		}
		w := weeks[name]
		if w == nil {
			w = new(forecast.Week)
			weeks[name] = w
		}
		n, err := w.Fold(*s)
		if err != nil {
			return 0, err
		}
		if n == 0 {
			continue
		}
		b, _ := w.MarshalBinary()
		k := WeekKey(schema, name)
		cmds = append(cmds, redisconn.Cmd{Key: k, Name: "SET", Args: []any{k, b, "PX", WeekTTL.Milliseconds()}})
		changed = append(changed, name)
	}
	if len(cmds) == 0 {
		return 0, nil
	}
	for i, r := range ws.router().DoContext(ctx, cmds, redisconn.Options{Timeout: ws.Timeout}) {
		if r.Err != nil {
			return 0, fmt.Errorf("forecast: write the week of %q: %w", changed[i], r.Err)
		}
	}
	return len(cmds), nil
}

func (ws Weeks) router() *redisconn.Router { return redisconn.NewRouter(ws.Store.Pool()) }
