package adaptertest

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/pulse-dev/pulse/timeseries"
)

// recordTB is a testing.TB that records a row's failures instead of
// failing the test: Fatal and Skip end the row's goroutine, as they end
// a test's. What it does not override (Context, TempDir) is the real
// test's.
type recordTB struct {
	testing.TB
	mu       sync.Mutex
	failures []string
	skipped  bool
	cleanups []func()
}

func (r *recordTB) Helper()             {}
func (r *recordTB) Log(...any)          {}
func (r *recordTB) Logf(string, ...any) {}
func (r *recordTB) Cleanup(f func())    { r.mu.Lock(); r.cleanups = append(r.cleanups, f); r.mu.Unlock() }

func (r *recordTB) fail(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, msg)
}

func (r *recordTB) Fail()                     { r.fail("Fail") }
func (r *recordTB) Error(a ...any)            { r.fail(fmt.Sprint(a...)) }
func (r *recordTB) Errorf(f string, a ...any) { r.fail(fmt.Sprintf(f, a...)) }
func (r *recordTB) FailNow()                  { r.fail("FailNow"); runtime.Goexit() }
func (r *recordTB) Fatal(a ...any)            { r.fail(fmt.Sprint(a...)); runtime.Goexit() }
func (r *recordTB) Fatalf(f string, a ...any) { r.fail(fmt.Sprintf(f, a...)); runtime.Goexit() }
func (r *recordTB) SkipNow()                  { r.skip() }
func (r *recordTB) Skip(...any)               { r.skip() }
func (r *recordTB) Skipf(string, ...any)      { r.skip() }
func (r *recordTB) Skipped() bool             { r.mu.Lock(); defer r.mu.Unlock(); return r.skipped }
func (r *recordTB) skip()                     { r.mu.Lock(); r.skipped = true; r.mu.Unlock(); runtime.Goexit() }
func (r *recordTB) Failed() bool              { r.mu.Lock(); defer r.mu.Unlock(); return len(r.failures) > 0 }
func (r *recordTB) recorded() (fails []string, skipped bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.failures), r.skipped
}

// record runs r on a recordTB over t, then its cleanups last first,
// and returns what it recorded.
func record(t *testing.T, pool timeseries.Pool, a Adapter, r row) (fails []string, skipped bool) {
	rt := &recordTB{TB: t}
	done := make(chan struct{})
	go func() { // Goexit ends the row, then its cleanups run
		defer close(done)
		defer func() {
			for i := len(rt.cleanups) - 1; i >= 0; i-- {
				rt.cleanups[i]()
			}
		}()
		runRow(rt, pool, a.withDefaults(), r)
	}()
	<-done
	return rt.recorded()
}
