# make run   - the example app with embedded Redis and SQLite
# make test  - installs what is missing, then the whole suite under -race, then
#              the browser test (internal/browsertest, a module of its own)
# make bench - Go benchmarks and the wrk load comparison (docs/bench-report.md,
#              summed up in BENCHMARKS.md)

GO ?= go
# Every package of every module in go.work: the library, the adapters in
# modules of their own, the example and the benchmarks.
PKGS = github.com/pulse-dev/pulse/...
ALLOC_PKGS = github.com/pulse-dev/pulse/middleware github.com/pulse-dev/pulse/echov5 github.com/pulse-dev/pulse/timeseries github.com/pulse-dev/pulse/internal/track

.PHONY: run test setup assets bench vet

run: assets
	$(GO) run ./example

test: setup
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 12m $(PKGS)
	# Allocation counts, without the race detector (its sync.Pool drops
	# items at random, so those tests skip under -race).
	$(GO) test -count=1 -run 'Alloc' $(ALLOC_PKGS)

setup:
	scripts/setup.sh

assets:
	scripts/fetch-echarts.sh

vet:
	$(GO) vet $(PKGS)

bench:
	GO=$(GO) scripts/bench.sh
