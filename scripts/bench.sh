#!/usr/bin/env bash
# make bench: the Go benchmarks of every package, then the HTTP load
# comparison (bare Echo, Pulse batched, Pulse write-through,
# echoprometheus, Pulse batched on a Redis Cluster) under wrk against a
# redis-server and a 3-master Redis Cluster of its own (formed with
# redis-cli --cluster create; the cluster's Redis commands/s are reported
# per node). Both land in docs/bench-report.md, summed up by hand at the
# top of BENCHMARKS.md; the last line printed is
# "pulse/bare throughput ratio: X.XX". Installs wrk and redis-server (which
# brings redis-cli) with apt-get when missing and fetches nothing else.
# Takes about eight minutes on 2 cores.
#
# Settings (environment): BENCH_ROUNDS (20), BENCH_DURATION (1s),
# BENCH_CONNECTIONS (32), BENCH_SCALE (1,8: extra runs of pulse and
# pulse-cluster at these connection counts), BENCH_GOMAXPROCS (1: the
# server's), BENCH_THREADS (1: wrk's), BENCH_COUNT (3: runs of each Go
# benchmark), BENCH_GO_TIME (300ms).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

missing=()
command -v "$GO" >/dev/null || { echo "bench: Go is not installed (https://go.dev/dl/)" >&2; exit 1; }
{ command -v redis-server && command -v redis-cli; } >/dev/null || missing+=(redis-server)
command -v wrk >/dev/null || missing+=(wrk)
. scripts/install.sh
install_missing bench "${missing[@]}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "bench: go test -run '^\$' -bench . -benchmem over every package (one package at a time)"
# -p 1: one test binary at a time, so benchmarks of two packages never
# share the CPUs.
"$GO" test -p 1 -run '^$' -bench . -benchmem -count "${BENCH_COUNT:-3}" -benchtime "${BENCH_GO_TIME:-300ms}" \
	-timeout 10m github.com/pulse-dev/pulse/... | tee "$work/gobench.txt"

echo "bench: HTTP load comparison"
"$GO" build -o "$work/loadbench" ./internal/testenv/bench/cmd/loadbench
"$work/loadbench" \
	-rounds "${BENCH_ROUNDS:-20}" \
	-duration "${BENCH_DURATION:-1s}" \
	-connections "${BENCH_CONNECTIONS:-32}" \
	-scale "${BENCH_SCALE:-1,8}" \
	-gomaxprocs "${BENCH_GOMAXPROCS:-1}" \
	-threads "${BENCH_THREADS:-1}" \
	-gobench "$work/gobench.txt" \
	-markdown docs/bench-report.md \
	-command "make bench"
