# make run   - the example app with embedded Redis and SQLite
# make test  - installs what is missing, then the whole suite under -race
# make bench - Go benchmarks and the wrk load comparison (BENCHMARKS.md)

GO ?= go

.PHONY: run test setup assets bench vet

run: assets
	$(GO) run ./example

test: setup
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 12m ./...

setup:
	scripts/setup.sh

assets:
	scripts/fetch-echarts.sh

vet:
	$(GO) vet ./...

bench:
	GO=$(GO) scripts/bench.sh
