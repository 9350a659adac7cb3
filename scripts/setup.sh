#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine: redis-server,
# MariaDB (mariadbd), PostgreSQL (initdb, postgres), Chromium and
# Prometheus (promtool, prometheus) and Alertmanager, then fetches the dashboard's echarts
# bundle. Anything it cannot install is named in the error.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v go >/dev/null || { echo "setup: Go is not installed (https://go.dev/dl/)" >&2; exit 1; }
command -v redis-server >/dev/null || missing+=(redis-server)
[ -x /usr/sbin/mariadbd ] || command -v mariadbd >/dev/null || command -v mysqld >/dev/null || missing+=(mariadb-server)
command -v chromium >/dev/null || missing+=(chromium)
# Debian keeps initdb and postgres off PATH, under /usr/lib/postgresql/<v>/bin.
{ command -v initdb >/dev/null || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; } || missing+=(postgresql)
command -v npm >/dev/null || missing+=(npm)
# promexport's tests run promtool and a Prometheus server; Debian's package has both.
{ command -v promtool >/dev/null && command -v prometheus >/dev/null; } || missing+=(prometheus)
# alert's tests post to a real Alertmanager; Debian names its binary prometheus-alertmanager.
command -v prometheus-alertmanager >/dev/null || missing+=(prometheus-alertmanager)

. scripts/install.sh
install_missing setup "${missing[@]}"

scripts/fetch-echarts.sh
