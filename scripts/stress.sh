#!/usr/bin/env bash
# stress.sh N HOGS: runs the suite (bash .ci/run) in N clean clones of
# HEAD, one after another, each beside HOGS busy processes pinned to the
# machine's cores in turn, as CI runs it on a busy machine. Prints each
# run's result, wall time and failing tests, and exits 1 if any run
# failed. Logs stay in $STRESS_DIR (default: a new temp dir).
#
#   scripts/stress.sh 5 2   # five clean clones, two cores kept busy
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 2 ] || ! [[ $1 =~ ^[1-9][0-9]*$ && $2 =~ ^[0-9]+$ ]]; then
	echo "usage: scripts/stress.sh N HOGS (N clean clones in turn, HOGS busy processes beside each)" >&2
	exit 2
fi
runs=$1 hogs=$2
repo=$PWD
head=$(git rev-parse HEAD)
logs=${STRESS_DIR:-$(mktemp -d -t pulse-stress-XXXXXX)}
mkdir -p "$logs"
cores=$(nproc)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "stress: uncommitted changes are not in the clones; HEAD $head is what runs" >&2
fi

hog_pids=()
stop_hogs() {
	for pid in "${hog_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${hog_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	hog_pids=()
}
clone=
cleanup() {
	stop_hogs
	[ -z "$clone" ] || rm -rf "$clone"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_hogs: HOGS shell loops that never sleep, the i-th pinned to core
# i mod cores.
start_hogs() {
	local i
	for ((i = 0; i < hogs; i++)); do
		taskset -c $((i % cores)) bash -c 'while :; do :; done' &
		hog_pids+=($!)
	done
}

failed=0
printf 'stress: %d clean clones of %s, %d hogs on %d cores, logs in %s\n' "$runs" "${head:0:12}" "$hogs" "$cores" "$logs"
for ((n = 1; n <= runs; n++)); do
	clone=$(mktemp -d -t pulse-clone-XXXXXX)
	git clone -q --no-hardlinks "$repo" "$clone/pulse"
	git -C "$clone/pulse" checkout -q "$head"
	# The echarts bundle is gitignored; copied when this tree has it,
	# otherwise setup fetches it.
	if [ -f dashboard/static/echarts.min.js ]; then
		mkdir -p "$clone/pulse/dashboard/static"
		cp dashboard/static/echarts.min.js "$clone/pulse/dashboard/static/"
	fi
	log=$logs/run-$n.log
	start_hogs
	start=$(date +%s)
	if (cd "$clone/pulse" && CI=true bash .ci/run) >"$log" 2>&1; then
		result=ok
	else
		result=FAIL
		failed=$((failed + 1))
	fi
	secs=$(($(date +%s) - start))
	stop_hogs
	printf 'run %d/%d: %-4s %dm%02ds  %s\n' "$n" "$runs" "$result" $((secs / 60)) $((secs % 60)) "$log"
	if [ "$result" = FAIL ]; then
		# The failing tests, innermost last; else the log's end.
		if grep -q -- '--- FAIL' "$log"; then
			grep -- '--- FAIL' "$log" | sed 's/^ */    /' | sort -u
		else
			tail -n 15 "$log" | sed 's/^/    /'
		fi
	fi
	rm -rf "$clone"
	clone=
done
printf 'stress: %d of %d runs passed\n' $((runs - failed)) "$runs"
[ "$failed" -eq 0 ]
