# make run   - the example app with embedded Redis and SQLite
# make test  - installs what is missing, then the whole suite under -race, then
#              the browser test (internal/testenv/browsertest, a module of its own)
# make bench - Go benchmarks and the wrk load comparison (docs/bench-report.md,
#              summed up in BENCHMARKS.md)

GO ?= go
# Every package of every module in go.work: the library, the adapters in
# modules of their own, the example and the benchmarks.
PKGS = github.com/pulse-dev/pulse/...
ALLOC_PKGS = github.com/pulse-dev/pulse/middleware github.com/pulse-dev/pulse/echov5 github.com/pulse-dev/pulse/timeseries github.com/pulse-dev/pulse/internal/track

# The tests that set their clock by the time of day (internal/testenv/testnow), run
# again as if started at each of these UTC times: just before and after
# midnight, and through the day.
TEST_TIMES = 23:59:40 00:00:05 00:30:00 06:00:00 12:00:00 18:00:00 23:00:00
TIMED_PKGS = ./timeseries ./dashboard
TIMED_RUN = ^(TestVisitors|TestCloseReportsLostVisitors|TestDurations|TestFlushCommandBudgetWithDurations|TestLatency|TestRoutes)
# Slower ones, which fill many buckets from a start by the clock: once,
# just before midnight.
TIMED_SLOW_RUN = ^(TestDurationTotals|TestKnownListed|TestRouteMemoryAtFullDepth|TestVisitorMemoryAtFullDepth)

.PHONY: run test test-hours setup assets bench vet

run: assets
	$(GO) run ./example

test: setup
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 12m $(PKGS)
	# Allocation counts, without the race detector (its sync.Pool drops
	# items at random, so those tests skip under -race).
	$(GO) test -count=1 -run 'Alloc' $(ALLOC_PKGS)
	$(MAKE) --no-print-directory test-hours

test-hours:
	@for at in $(TEST_TIMES); do \
		echo "PULSE_TEST_TIME=$$at"; \
		PULSE_TEST_TIME=$$at $(GO) test -count=1 -run '$(TIMED_RUN)' $(TIMED_PKGS) || exit 1; \
	done
	PULSE_TEST_TIME=23:59:40 $(GO) test -count=1 -run '$(TIMED_SLOW_RUN)' ./timeseries

setup:
	scripts/setup.sh

assets:
	scripts/fetch-echarts.sh

vet:
	$(GO) vet $(PKGS)

bench:
	GO=$(GO) scripts/bench.sh
