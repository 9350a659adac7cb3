# make run   - the example app with embedded Redis and SQLite
# make test  - installs what is missing, then the whole suite under -race, then
#              the browser test (internal/browsertest, a module of its own)
# make bench - Go benchmarks and the wrk load comparison (BENCHMARKS.md)

GO ?= go

.PHONY: run test setup assets bench vet

run: assets
	$(GO) run ./example

test: setup
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 12m ./...
	cd internal/browsertest && GOWORK=off $(GO) vet ./... && GOWORK=off $(GO) test -count=1 -timeout 5m ./...

setup:
	scripts/setup.sh

assets:
	scripts/fetch-echarts.sh

vet:
	$(GO) vet ./...

bench:
	GO=$(GO) scripts/bench.sh
