// Package ratelog logs background errors without flooding the log: an
// outage that fails every flush for an hour writes a line per interval, not
// thousands.
//
//	onError := ratelog.New("pulse: flush failed", time.Minute)
//	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, OnError: onError})
package ratelog

import (
	"log/slog"
	"sync"
	"time"
)

// New returns an error sink that logs with log/slog at most once per every,
// under msg, and says how many errors it held back in between.
func New(msg string, every time.Duration) func(error) {
	var mu sync.Mutex
	var last time.Time
	var suppressed int
	return func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); last.IsZero() || now.Sub(last) >= every {
			slog.Error(msg, "err", err, "suppressed", suppressed)
			last, suppressed = now, 0
			return
		}
		suppressed++
	}
}
