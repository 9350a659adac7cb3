#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine: redis-server,
# MariaDB (mariadbd) and Chromium, then fetches the dashboard's echarts
# bundle. Anything it cannot install is named in the error.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v go >/dev/null || { echo "setup: Go is not installed (https://go.dev/dl/)" >&2; exit 1; }
command -v redis-server >/dev/null || missing+=(redis-server)
[ -x /usr/sbin/mariadbd ] || command -v mariadbd >/dev/null || command -v mysqld >/dev/null || missing+=(mariadb-server)
command -v chromium >/dev/null || missing+=(chromium)
command -v npm >/dev/null || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
	sudo=""
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null; then sudo="sudo"; else
			echo "setup: missing ${missing[*]}; install them with: apt-get install ${missing[*]}" >&2
			exit 1
		fi
	fi
	if ! command -v apt-get >/dev/null; then
		echo "setup: missing ${missing[*]} and apt-get is not available; install them with your package manager" >&2
		exit 1
	fi
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq >/dev/null || true
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || {
		echo "setup: apt-get could not install ${missing[*]}" >&2
		exit 1
	}
fi

scripts/fetch-echarts.sh
