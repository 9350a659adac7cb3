// Package redistest runs real redis-server processes for tests: single
// servers, Redis Clusters, and the faults clients meet in production. There
// are no mocks; what a test sees is what Redis 7 answers.
//
// # Servers
//
// Start (or StartWith, for extra arguments or cluster mode) launches a
// private redis-server on a free loopback port below 55535 (so its cluster
// bus port, port+10000, is valid and free too) with a directory of its
// own, AOF fsynced on every write, and a 100 ms busy-reply-threshold. It is
// stopped when the test ends. Each process has its own process group and
// is killed with the test binary (Pdeathsig), so none outlives a crashed
// test. Servers this package did not start, such as a system Redis on
// 6379, are never touched.
//
// Stop, Kill (SIGKILL) and Restart (same port and data) model shutdowns and
// crashes; Pause and Resume (SIGSTOP/SIGCONT) a hung server.
//
// # Faults
//
// Each fault helper returns an idempotent restore func, and documents what
// clients see meanwhile:
//
//   - OOM: writes get "OOM command not allowed ..." (maxmemory 1, noeviction).
//   - ReadOnly: writes get "READONLY ..." (REPLICAOF a dead port); data is kept.
//   - Busy: every command gets "BUSY ..." while a Lua script spins.
//   - Loading: every command gets "LOADING ..." while the server restarts and
//     reloads its data slowly (hidden key-load-delay config); data is kept.
//
// ReadOnly and Loading are for single servers; OOM and Busy work on cluster
// nodes too.
//
// # Clusters
//
// StartCluster forms a cluster of real nodes with redis-cli --cluster
// create and waits until it is ok everywhere. SharedCluster gives the tests
// of one binary a single 3-master, 3-replica cluster, started on first use
// and stopped by Main, which such binaries call from TestMain:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
// Tests sharing it call Reset first and do not run in parallel. A Cluster
// reads roles live from CLUSTER NODES (failovers change them) and changes
// its topology the way operators do: Failover (CLUSTER FAILOVER),
// KillMaster then RestartNode, MigrateSlot and MigrateSlotSlowly (SETSLOT,
// GETKEYSINSLOT, MIGRATE), the latter slow enough for traffic to meet ASK
// and TRYAGAIN. Client returns a redisc client of it.
//
// When redis-server or redis-cli is missing, tests fail saying what to
// install: apt-get install redis-server (which brings redis-cli); `make
// test` installs it.
package redistest
