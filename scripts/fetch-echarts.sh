#!/usr/bin/env bash
# Fetches the echarts bundle pinned in dashboard/assets/package.json from the
# npm registry and puts it where go:embed picks it up. The bundle is never
# committed (see .gitignore).
set -euo pipefail
cd "$(dirname "$0")/../dashboard/assets"
want=$(sed -n 's/.*"echarts": *"\([^"]*\)".*/\1/p' package.json)
out=../static/echarts.min.js
mkdir -p ../static
if [ -s "$out" ] && [ -f .fetched ] && [ "$(cat .fetched)" = "$want" ]; then
	exit 0
fi
command -v npm >/dev/null || { echo "fetch-echarts: npm is missing; install it with: apt-get install npm" >&2; exit 1; }
npm install --no-audit --no-fund --silent >/dev/null 2>&1 || npm install --no-audit --no-fund
cp node_modules/echarts/dist/echarts.min.js "$out"
echo "$want" > .fetched
echo "fetch-echarts: echarts $want -> dashboard/static/echarts.min.js"
