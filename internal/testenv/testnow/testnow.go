// Package testnow is the tests' "now": real time, or real time moved
// forward to a chosen time of day, so the suite can be run as if it were
// started just before midnight, at 06:00 and so on.
//
// PULSE_TEST_TIME=HH:MM:SS (UTC) moves Now forward by the least amount,
// under 24 h, that puts the test binary's start at that time of day. The
// shift is only ever forward: the redis-server processes the tests start
// keep the real clock (libfaketime hangs Redis 7 built with jemalloc at
// start), and a key given EXPIREAT by a shifted clock then lives at least
// as long as the test expects. A test that reads Now for its clock must
// not rely on Redis expiring a key.
//
// Unset, Now is time.Now.
package testnow

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// Env names the variable that sets the time of day.
const Env = "PULSE_TEST_TIME"

var (
	once   sync.Once
	offset time.Duration
	errEnv error
)

// Now returns real time moved by Offset.
func Now() time.Time { return time.Now().Add(Offset()) }

// Offset returns how far Now is ahead of real time; it panics when
// PULSE_TEST_TIME is set and is not HH:MM:SS, so a bad setting is never
// run silently as real time.
func Offset() time.Duration {
	once.Do(func() { offset, errEnv = OffsetTo(os.Getenv(Env), time.Now()) })
	if errEnv != nil {
		panic(errEnv)
	}
	return offset
}

// OffsetTo is the least offset in [0, 24 h) that moves real to the UTC
// time of day hms ("HH:MM:SS"); 0 for "".
func OffsetTo(hms string, real time.Time) (time.Duration, error) {
	if hms == "" {
		return 0, nil
	}
	tod, err := time.Parse("15:04:05", hms)
	if err != nil {
		return 0, fmt.Errorf("testnow: %s=%q: want HH:MM:SS (UTC)", Env, hms)
	}
	want := time.Duration(tod.Hour())*time.Hour + time.Duration(tod.Minute())*time.Minute + time.Duration(tod.Second())*time.Second
	real = real.UTC()
	midnight := time.Date(real.Year(), real.Month(), real.Day(), 0, 0, 0, 0, time.UTC)
	d := midnight.Add(want).Sub(real)
	if d < 0 {
		d += 24 * time.Hour
	}
	return d, nil
}
