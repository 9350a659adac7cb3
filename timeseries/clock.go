package timeseries

import (
	"sync"
	"time"
)

// Clock tells the time. Inject one to make buckets deterministic in
// tests; nil means the system clock. A *ManualClock also times the
// recorder's flushes.
type Clock interface {
	Now() time.Time
}

// timer is the part of *time.Timer a Recorder uses.
type timer interface {
	C() <-chan time.Time
	// Reset and Stop behave as those of *time.Timer since Go 1.23: no
	// stale value is received after they return.
	Reset(d time.Duration) bool
	Stop() bool
}

// ticker is the part of *time.Ticker a Recorder uses.
type ticker interface {
	C() <-chan time.Time
	Stop()
}

// timerClock is a Clock that also makes the timers and tickers a Recorder
// waits on, so that a test moving the clock moves those too. The system
// clock and *ManualClock are timerClocks; a Recorder given any other
// Clock waits on the system's timers.
type timerClock interface {
	Clock
	newTimer(d time.Duration) timer
	newTicker(d time.Duration) ticker
}

// SystemClock is the system's clock, the one a nil Config.Clock means:
// give it where a Clock is wanted and the wall time is meant.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

func (SystemClock) newTimer(d time.Duration) timer { return sysTimer{time.NewTimer(d)} }

func (SystemClock) newTicker(d time.Duration) ticker { return sysTicker{time.NewTicker(d)} }

type sysTimer struct{ *time.Timer }

func (t sysTimer) C() <-chan time.Time { return t.Timer.C }

type sysTicker struct{ *time.Ticker }

func (t sysTicker) C() <-chan time.Time { return t.Ticker.C }

// timersOf is c's timers, or the system's if c makes none.
func timersOf(c Clock) timerClock {
	if tc, ok := c.(timerClock); ok {
		return tc
	}
	return nowOnly{c}
}

// nowOnly gives a Clock that makes no timers the system's.
type nowOnly struct{ Clock }

func (nowOnly) newTimer(d time.Duration) timer { return SystemClock{}.newTimer(d) }

func (nowOnly) newTicker(d time.Duration) ticker { return SystemClock{}.newTicker(d) }

// ManualClock is a Clock that moves only when told to, for tests: given
// as Config.Clock it stamps the hits and times the flushes, which run
// when Advance moves it past a FlushInterval. Safe for concurrent use.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	alarms map[*alarm]struct{} // armed timers and tickers
}

// alarm is a ManualClock's timer (period 0) or ticker.
type alarm struct {
	clock  *ManualClock
	ch     chan time.Time
	at     time.Time
	period time.Duration
}

// NewManualClock returns a clock stopped at t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{now: t} }

// Now returns the clock's current time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock by d, back when d is negative, and fires the
// timers and tickers that fall due.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.fireLocked()
	c.mu.Unlock()
}

// newTimer returns a timer that fires once the clock reaches d from now.
func (c *ManualClock) newTimer(d time.Duration) timer { return c.arm(d, 0) }

// newTicker returns a ticker that fires each time the clock passes
// another d; like a *time.Ticker it drops ticks a slow reader misses.
func (c *ManualClock) newTicker(d time.Duration) ticker {
	if d <= 0 {
		panic("timeseries: non-positive interval for NewTicker")
	}
	return manualTicker{c.arm(d, d)}
}

type manualTicker struct{ *alarm }

func (t manualTicker) Stop() { t.alarm.Stop() }

func (c *ManualClock) arm(d, period time.Duration) *alarm {
	a := &alarm{clock: c, ch: make(chan time.Time, 1), period: period}
	c.mu.Lock()
	defer c.mu.Unlock()
	a.at = c.now.Add(d)
	c.startLocked(a)
	return a
}

func (c *ManualClock) startLocked(a *alarm) {
	if c.alarms == nil {
		c.alarms = map[*alarm]struct{}{}
	}
	c.alarms[a] = struct{}{}
	c.fireLocked()
}

// fireLocked sends the time to every alarm now due, without blocking.
func (c *ManualClock) fireLocked() {
	for a := range c.alarms {
		if a.at.After(c.now) {
			continue
		}
		select {
		case a.ch <- a.at:
		default:
		}
		if a.period == 0 {
			delete(c.alarms, a)
			continue
		}
		for !a.at.After(c.now) {
			a.at = a.at.Add(a.period)
		}
	}
}

func (a *alarm) C() <-chan time.Time { return a.ch }

// Reset rearms a timer to fire d from now.
func (a *alarm) Reset(d time.Duration) bool {
	c := a.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	active := a.stopLocked()
	a.at = c.now.Add(d)
	c.startLocked(a)
	return active
}

// Stop disarms a timer or ticker.
func (a *alarm) Stop() bool {
	a.clock.mu.Lock()
	defer a.clock.mu.Unlock()
	return a.stopLocked()
}

func (a *alarm) stopLocked() bool {
	_, active := a.clock.alarms[a]
	delete(a.clock.alarms, a)
	select {
	case <-a.ch:
	default:
	}
	return active
}
