// Package redistest runs real redis-server processes for tests: single
// servers, Redis Clusters, and the faults clients meet in production. There
// are no mocks; what a test sees is what Redis 7 answers.
//
// # Servers
//
// A test starts a private server and talks to it:
//
//	func TestCount(t *testing.T) {
//		srv := redistest.Start(t) // stopped when t ends
//		pool := srv.Pool()        // closed when t ends
//		c := pool.Get()
//		defer c.Close()
//		// ... or one command that fails t on error:
//		srv.Do("SET", "k", "v")
//	}
//
// StartWith adds redis-server arguments:
//
//	srv := redistest.StartWith(t, redistest.Options{Args: []string{"--maxmemory-policy", "allkeys-lru"}})
//
// Servers are started by internal/proc on a free loopback port below 55535
// (so a cluster node's bus port, port+10000, is valid and free too), each
// in a directory of its own, with AOF fsynced on every write and a 100 ms
// busy-reply-threshold. Each has its own process group and is killed with
// the test binary, so none outlives a crashed test. Servers this package
// did not start, such as a system Redis on 6379, are never touched.
//
// Shutdowns, crashes and hangs:
//
//	srv.Stop()    // SIGTERM, SIGKILL after 5 s
//	srv.Kill()    // SIGKILL, as a crash or the OOM killer would
//	srv.Restart() // same port and data: every acknowledged write is back
//	srv.Pause()   // SIGSTOP: connections stay open, nothing answers
//	srv.Resume()
//
// # Faults
//
// A server's Faults each return an idempotent restore func:
//
//		restore := srv.Faults().OOM() // writes get "OOM command not allowed ..."
//		defer restore()
//
//	  - OOM: writes get "OOM command not allowed ..." (maxmemory 1, noeviction).
//	  - ReadOnly: writes get "READONLY ..." (REPLICAOF a dead port); data is kept.
//	  - Busy(d): every command gets "BUSY ..." while a Lua script spins.
//	  - Loading(d): every command gets "LOADING ..." while the server restarts
//	    and reloads its data slowly (hidden key-load-delay config); data is kept.
//
// ReadOnly and Loading are for single servers; OOM and Busy work on cluster
// nodes too.
//
// # Clusters
//
// StartCluster forms a cluster of real nodes with redis-cli --cluster
// create and waits until it is ok everywhere:
//
//	cl := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3, Replicas: 1})
//	rc := cl.Client(t) // a redisc client, its slot map loaded
//	cl.Do(t, "user:1", "SET", "user:1", "x") // on the master serving the key
//
// Starting a cluster takes seconds, so the tests of one binary usually
// share one of 3 masters with a replica each, started on first use and
// stopped by Main:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
//	func TestFailover(t *testing.T) {
//		cl := redistest.SharedCluster(t)
//		cl.Reset(t) // whole again, flushed; tests sharing it do not run in parallel
//		master := cl.MasterOf("user:1")
//		cl.KillMaster(t, master)  // SIGKILL; waits until its replica took over
//		cl.RestartNode(t, master) // it rejoins as a replica
//	}
//
// A Cluster reads roles live from CLUSTER NODES (failovers change them:
// Masters, Replicas, ReplicaOf, MasterOf) and changes its topology the way
// operators do: Failover (CLUSTER FAILOVER), KillMaster then RestartNode,
// MigrateSlot and MigrateSlotSlowly (SETSLOT, GETKEYSINSLOT, MIGRATE), the
// latter slow enough for traffic running meanwhile to meet ASK and
// TRYAGAIN:
//
//	go traffic()
//	cl.MigrateSlotSlowly(t, redisc.Slot("user:1"), other, 10*time.Millisecond)
//
// The files: redistest.go (a server), faults.go (its faults), cluster.go
// (forming a cluster, reading its roles), health.go (what an ok cluster is,
// Reset), cluster_faults.go (failover, kill, slot migration), nodes.go
// (CLUSTER NODES), main.go (Main, SharedCluster).
//
// # Main
//
// Main also starts one plain redis-server for the package's Example
// functions, which take no testing.T, and sets REDIS_URL to it. A package
// that needs other harnesses too passes their Setup:
//
//	func TestMain(m *testing.M) { redistest.Main(m, mariadbtest.Setup, pgtest.Setup) }
//
// When redis-server or redis-cli is missing, tests fail saying what to
// install: apt-get install redis-server (which brings redis-cli); `make
// test` installs it.
package redistest
