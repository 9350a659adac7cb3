package harness

import (
	"sync"
	"testing"
)

// Shared is a server that the tests of one binary share once its Setup
// has run (from Main): started by the first test that asks for it and
// stopped by Setup's teardown. Without Setup each test gets a server of
// its own, stopped when it ends: correct, but slower.
type Shared[S any] struct {
	start func() (S, error)
	stop  func(S)

	mu      sync.Mutex
	on      bool // Setup has run
	started bool
	s       S
	err     error // a failed start is not retried by every test
}

// NewShared is a Shared server that start starts and stop stops.
func NewShared[S any](start func() (S, error), stop func(S)) *Shared[S] {
	return &Shared[S]{start: start, stop: stop}
}

// Setup makes Get share one server, and its teardown stops that server.
func (sh *Shared[S]) Setup() (teardown func(), err error) {
	sh.mu.Lock()
	sh.on = true
	sh.mu.Unlock()
	return sh.teardown, nil
}

func (sh *Shared[S]) teardown() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.started {
		sh.stop(sh.s)
		var zero S
		sh.s, sh.started, sh.err = zero, false, nil
	}
}

// Get returns the shared server, started on first use, or without Setup
// a server of tb's own, stopped when tb ends.
func (sh *Shared[S]) Get(tb testing.TB) (S, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.on {
		s, err := sh.start()
		if err == nil {
			tb.Cleanup(func() { sh.stop(s) })
		}
		return s, err
	}
	if !sh.started && sh.err == nil {
		sh.s, sh.err = sh.start()
		sh.started = sh.err == nil
	}
	return sh.s, sh.err
}
