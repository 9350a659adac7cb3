#!/usr/bin/env bash
# Runs the tests that set their clock by the time of day
# (internal/testenv/testnow) as if started at each of TEST_TIMES (UTC),
# a few offsets at once. The test binaries are built once; each offset
# runs them in their package directory with PULSE_TEST_TIME set.
#
# Environment (the Makefile sets them): GO, TEST_TIMES, TIMED_DIRS,
# TIMED_RUN, SLOW_TIME, SLOW_DIR, TIMED_SLOW_RUN, HOURS_JOBS (4: offsets
# at once).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
pkgs=()
for d in $TIMED_DIRS; do pkgs+=("./$d"); done
"${GO:-go}" test -c -o "$bin/" "${pkgs[@]}"

# one <time> <dir> <run>: one package's tests at one time of day; its
# output is shown only when it fails.
one() {
	local out
	if ! out=$(cd "$2" && PULSE_TEST_TIME=$1 "$bin/$2.test" -test.count=1 -test.run "$3" 2>&1); then
		printf 'FAIL PULSE_TEST_TIME=%s %s\n%s\n' "$1" "$2" "$out"
		return 1
	fi
	printf 'ok   PULSE_TEST_TIME=%s %s\n' "$1" "$2"
}
export -f one
export bin

{
	for at in $TEST_TIMES; do
		for d in $TIMED_DIRS; do printf '%s\t%s\t%s\n' "$at" "$d" "$TIMED_RUN"; done
	done
	printf '%s\t%s\t%s\n' "$SLOW_TIME" "$SLOW_DIR" "$TIMED_SLOW_RUN"
} | xargs -d '\n' -P "${HOURS_JOBS:-4}" -n 1 bash -c 'IFS=$'"'"'\t'"'"' read -r at dir run <<<"$0"; one "$at" "$dir" "$run"'
