package redistest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/harness"
)

var (
	underMain atomic.Bool
	shared    struct {
		once sync.Once
		c    *Cluster
		err  error
	}
)

// Main runs the tests with the harness set up, then undoes it, and exits
// with the tests' status. Call it from TestMain:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
// A package that uses other harnesses too passes their Setup:
//
//	func TestMain(m *testing.M) { redistest.Main(m, mariadbtest.Setup, pgtest.Setup) }
//
// See Setup for what it prepares.
func Main(m *testing.M, others ...harness.Setup) {
	harness.Run(m, append([]harness.Setup{Setup}, others...)...)
}

// Setup is redistest's part of Main. It makes SharedCluster available, and
// for the package's Example functions, which take no testing.T, it starts
// one plain redis-server and sets REDIS_URL to it, so an example dials
// os.Getenv("REDIS_URL") the way an app would. The examples of a package
// share it: each uses series names of its own. teardown stops that server
// and the cluster SharedCluster started, if any, and removes their files.
func Setup() (teardown func(), err error) {
	underMain.Store(true)
	stopExamples, err := startExampleServer()
	if err != nil {
		return nil, err
	}
	return func() {
		stopExamples()
		if shared.c != nil {
			shared.c.stop()
		}
	}, nil
}

// startExampleServer starts the server Main offers examples in REDIS_URL.
func startExampleServer() (stop func(), err error) {
	dir, err := os.MkdirTemp("", "redistest-examples-")
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	s, err := newServer(dir, Options{})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	_ = os.Setenv("REDIS_URL", "redis://"+s.Addr+"/0")
	return func() {
		s.Stop()
		_ = os.RemoveAll(dir)
	}, nil
}

// SharedCluster returns the test binary's cluster of 3 masters with one
// replica each, started on first use and stopped by Main. Tests sharing it
// must not run in parallel, should call Reset first, and must leave it
// whole (RestartNode what they kill; Reset restarts what is left dead).
// Server methods of its nodes report failures to the test that last called
// SharedCluster.
func SharedCluster(tb testing.TB) *Cluster {
	tb.Helper()
	if !underMain.Load() {
		tb.Fatal("redistest: SharedCluster needs TestMain to call redistest.Main, which stops the cluster: func TestMain(m *testing.M) { redistest.Main(m) }")
	}
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "redistest-cluster-")
		if err != nil {
			shared.err = fmt.Errorf("redistest: %w", err)
			return
		}
		dirs := make([]string, 6)
		for i := range dirs {
			dirs[i] = filepath.Join(dir, strconv.Itoa(i))
			if err := os.Mkdir(dirs[i], 0o755); err != nil {
				shared.err = fmt.Errorf("redistest: %w", err)
				return
			}
		}
		shared.c, shared.err = startCluster(ClusterOptions{Masters: 3, Replicas: 1}, dirs)
		if shared.err != nil {
			_ = os.RemoveAll(dir)
			return
		}
		shared.c.dir = dir
	})
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	shared.c.bind(tb)
	return shared.c
}
