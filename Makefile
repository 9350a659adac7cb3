# make run   - the example app with embedded Redis and SQLite
# make test  - installs what is missing, then every test once: the packages
#              with concurrency under -race, the others, the SQL server
#              matrices and the measurements without it, and the tests that
#              read the time of day at several times of day (docs/testing.md)
# make bench - Go benchmarks and the wrk load comparison (docs/bench-report.md,
#              summed up in BENCHMARKS.md)

GO ?= go
# Every package of every module in go.work: the library, the adapters in
# modules of their own, the example and the benchmarks.
PKGS = github.com/pulse-dev/pulse/...
# The race pass: the packages whose code or tests start goroutines or
# share memory (sync, sync/atomic). internal/testenv/race checks that each
# such package is named here, the slowest first: go test starts them in
# this order, and a long package left to the end runs alone. Every other
# package runs once without -race
# (PLAIN_PKGS): the detector finds nothing in code that runs on one
# goroutine, and slows it up to tenfold.
RACE_PKGS = $(addprefix github.com/pulse-dev/pulse/,timeseries alert example entity internal/testenv/browsertest dashboard pulseecho example/forum cleaner internal/testenv/bench internal/testenv/redistest pulsehttp internal/testenv/bench/fleet forecast/fromstore echov5 adapter/adaptertest internal/redisconn adapter alert/anomaly example/minimal example/minimalchi example/minimalfiber example/minimalgin example/minimalhttp example/minimalv5 forecast internal/ratelog internal/testenv/dashtest internal/testenv/harness internal/testenv/minimaltest internal/testenv/ports internal/testenv/proc internal/testenv/tcpproxy internal/testenv/testnow internal/testenv/tracktest internal/testenv/wiretest otelexport pulsefiber timeseries/internal/visitors)
PLAIN_PKGS = $(filter-out $(RACE_PKGS),$(shell $(GO) list $(PKGS)))
# The SQL server legs of entity's matrices (the subtests under a test
# named mariadb and postgres) run once, without -race: their time goes to
# round trips with the servers, where the detector has nothing to see;
# the SQLite leg runs the same code paths under it. The race pass skips
# them and the server pass runs them, by the same pattern, so none is
# lost. Only a test's own body runs in both, and a test that is not a
# matrix does its work in a subtest or keeps its body short.
SERVER_LEGS = /(mariadb|postgres)$$
# Measurements run without the race detector, their SQL server legs in
# the server pass: allocation counts (its
# sync.Pool drops items at random), memory, costs and accuracy over many
# series (it finds no race there and slows them tenfold). Under -race they
# skip (race.SkipMeasurement); internal/testenv/race checks that every
# one is named here or in TIMED_SLOW_RUN.
MEASURE_PKGS = github.com/pulse-dev/pulse/pulseecho github.com/pulse-dev/pulse/echov5 github.com/pulse-dev/pulse/pulsegin github.com/pulse-dev/pulse/pulsechi github.com/pulse-dev/pulse/timeseries github.com/pulse-dev/pulse/adapter github.com/pulse-dev/pulse/entity github.com/pulse-dev/pulse/forecast
MEASURE_RUN = Alloc|^(TestCachesAreBounded|TestLayoutMemory|TestCompactFollowsActiveSet|TestCacheEvicting|TestMemoryPerEntity|TestNoticeToManyUsersCostsConstantWrites|TestDetection|TestCoverage|TestPointAccuracy|TestRunSumCatchesBlurredEvents|TestLowVolumeRaisesNoFlags|TestDailyTrendGainCatchesSpikes|TestFlagWindowEndsWithTheRun|TestSparseSeriesRaiseNoFlags|TestPersistenceGuardsFalseFlags|TestRealCorpus|TestRealCorpusRecall|TestRealCorpusBurst|TestRealCorpusWeek|TestRealCorpusRanking|TestRealCorpusBreaksRank)$$

# The tests that set their clock by the time of day (internal/testenv/testnow), run
# again as if started at each of these UTC times: just before and after
# midnight, and through the day.
export TEST_TIMES = 23:59:40 00:00:05 00:30:00 06:00:00 12:00:00 18:00:00 23:00:00
export TIMED_DIRS = timeseries dashboard
export TIMED_RUN = ^(TestVisitors|TestCloseReportsLostVisitors|TestDurations|TestFlushCommandBudgetWithDurations|TestLatency|TestRoutes)
# Slower ones, which fill many buckets from a start by the clock: once,
# just before midnight.
export SLOW_TIME = 23:59:40
export SLOW_DIR = timeseries
export TIMED_SLOW_RUN = ^(TestDurationTotals|TestKnownListed|TestRouteMemoryAtFullDepth|TestVisitorMemoryAtFullDepth)

# The tests' servers, databases and logs go under TMPDIR: on a tmpfs
# their writes and fsyncs cost no disk, which made the SQL server pass
# take half the CPU. /dev/shm where it is a writable directory; set
# TEST_TMPDIR= to keep the system's.
TEST_TMPDIR ?= $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm)

.PHONY: run test test-race test-plain test-servers test-measure test-hours setup assets bench vet

# The example is built, then run: `go run` exits 1 when interrupted,
# whatever the program returns (golang/go#40467), so Ctrl-C would end in
# make's "Error 1". The binary gets the terminal's SIGINT, shuts down in
# order and exits 0. ARGS are its flags: make run ARGS=-demo-traffic
# On a first run the echarts fetch (waiting on the network) goes on while
# the example's third-party packages compile (the CPU's work), and only
# Pulse's own wait for the bundle.
RUN_BIN ?= bin/example
run:
	@scripts/fetch-echarts.sh & fetch=$$!; \
	$(GO) build $$($(GO) list -e -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' ./example | grep -v '^github.com/pulse-dev/pulse') || true; \
	wait $$fetch
	$(GO) build -o $(RUN_BIN) ./example
	$(RUN_BIN) $(ARGS)

# After vet, the five passes run side by side: the race pass's tests
# spend much of their time waiting on servers and clocks, as do the SQL
# server legs and the hours pass, so the cores have room for the rest.
# The race pass, the longest, runs three packages at once (-p 3) and up
# to four of a package's parallel tests (-parallel 4). No pass runs under
# nice: beside other work on the machine, a niced pass starved past its
# timeout. -Otarget prints each pass's output whole when it ends (so
# TEST_FLAGS=-json lines never interleave); -k lets every pass finish and
# report before make fails. A test's deadline guards against a hang only
# (docs/testing.md), so a loaded machine makes the suite slower, never
# red. TEST_FLAGS adds go test flags to every pass, e.g. TEST_FLAGS=-json
# for the timing table.
test: setup
	$(GO) vet $(PKGS)
	$(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR)) $(MAKE) --no-print-directory -k -j5 -Otarget test-race test-plain test-servers test-measure test-hours

test-race:
	$(GO) test $(TEST_FLAGS) -race -count=1 -p 3 -parallel 4 -timeout 15m -skip '$(SERVER_LEGS)' $(RACE_PKGS)

test-plain:
	$(GO) test $(TEST_FLAGS) -count=1 -p 2 -timeout 15m $(PLAIN_PKGS)

test-servers:
	$(GO) test $(TEST_FLAGS) -count=1 -timeout 15m -run '$(SERVER_LEGS)' github.com/pulse-dev/pulse/entity

test-measure:
	$(GO) test $(TEST_FLAGS) -count=1 -timeout 15m -run '$(MEASURE_RUN)' -skip '$(SERVER_LEGS)' $(filter $(RACE_PKGS),$(MEASURE_PKGS))

test-hours:
	GO=$(GO) scripts/test-hours.sh

setup:
	scripts/setup.sh

assets:
	scripts/fetch-echarts.sh

vet:
	$(GO) vet $(PKGS)

bench:
	GO=$(GO) scripts/bench.sh
