// Package race tells tests whether the race detector is on, so a test
// that measures (allocations, Redis memory, accuracy over many series)
// can leave the race pass to the pass without it: the detector finds
// nothing in such work and slows it tenfold, and sync.Pool drops items at
// random under it. `make test` runs those tests in its pass without -race.
package race

import "testing"

// SkipMeasurement skips t under the race detector, saying why.
func SkipMeasurement(t testing.TB) {
	t.Helper()
	if Enabled {
		t.Skip("a measurement: run without -race (make test does)")
	}
}
