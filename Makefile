# make run   - the example app with embedded Redis and SQLite
# make test  - installs what is missing, then the whole suite under -race, then
#              the browser test (internal/browsertest, a module of its own)
# make bench - Go benchmarks and the wrk load comparison (BENCHMARKS.md)

GO ?= go
# Every package of every module in go.work: the library, the adapters in
# modules of their own, the example and the benchmarks.
PKGS = github.com/pulse-dev/pulse/...

.PHONY: run test setup assets bench vet

run: assets
	$(GO) run ./example

test: setup
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 12m $(PKGS)

setup:
	scripts/setup.sh

assets:
	scripts/fetch-echarts.sh

vet:
	$(GO) vet $(PKGS)

bench:
	GO=$(GO) scripts/bench.sh
