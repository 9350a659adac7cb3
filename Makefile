# make run   - the example app with embedded Redis and SQLite
# make test  - installs what is missing, then the whole suite under -race (the
#              browser test included), the measurements without it, and the
#              tests that read the time of day at several times of day
# make bench - Go benchmarks and the wrk load comparison (docs/bench-report.md,
#              summed up in BENCHMARKS.md)

GO ?= go
# Every package of every module in go.work: the library, the adapters in
# modules of their own, the example and the benchmarks.
PKGS = github.com/pulse-dev/pulse/...
# Measurements run without the race detector: allocation counts (its
# sync.Pool drops items at random), memory, costs and accuracy over many
# series (it finds no race there and slows them tenfold). Under -race they
# skip (race.SkipMeasurement); internal/testenv/race checks that every
# one is named here or in TIMED_SLOW_RUN.
MEASURE_PKGS = github.com/pulse-dev/pulse/middleware github.com/pulse-dev/pulse/echov5 github.com/pulse-dev/pulse/pulsegin github.com/pulse-dev/pulse/pulsechi github.com/pulse-dev/pulse/timeseries github.com/pulse-dev/pulse/adapter github.com/pulse-dev/pulse/entity github.com/pulse-dev/pulse/forecast
MEASURE_RUN = Alloc|^(TestCachesAreBounded|TestLayoutMemory|TestCacheEvicting|TestMemoryPerEntity|TestNoticeToManyUsersCostsConstantWrites|TestDetection|TestCoverage|TestPointAccuracy|TestRunSumCatchesBlurredEvents|TestLowVolumeRaisesNoFlags|TestDailyTrendGainCatchesSpikes|TestFlagWindowEndsWithTheRun|TestSparseSeriesRaiseNoFlags|TestPersistenceGuardsFalseFlags|TestRealCorpus|TestRealCorpusRecall|TestRealCorpusBurst|TestRealCorpusWeek|TestRealCorpusRanking|TestRealCorpusBreaksRank)$$

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

.PHONY: run test test-hours setup assets bench vet

# The example is built, then run: `go run` exits 1 when interrupted,
# whatever the program returns (golang/go#40467), so Ctrl-C would end in
# make's "Error 1". The binary gets the terminal's SIGINT, shuts down in
# order and exits 0. ARGS are its flags: make run ARGS=-demo-traffic
RUN_BIN ?= bin/example
run: assets
	$(GO) build -o $(RUN_BIN) ./example
	$(RUN_BIN) $(ARGS)

# The race pass runs two packages at once (-p 2): many tests wait on
# Redis, SQL servers or a browser, but with four at once on two cores the
# race detector's slowdown starved the servers, and calls that have a
# deadline (a Redis read, a SQL statement) timed out in one run of two.
test: setup
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -p 2 -timeout 12m $(PKGS)
	$(GO) test -count=1 -run '$(MEASURE_RUN)' $(MEASURE_PKGS)
	$(MAKE) --no-print-directory test-hours

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
