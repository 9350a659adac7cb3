#!/usr/bin/env bash
# Fetches the echarts bundle pinned in dashboard/assets/package.json from the
# npm registry and puts it where go:embed picks it up. The bundle is never
# committed (see .gitignore).
#
# It takes the one package tarball (npm pack: no node_modules, no lock
# file), checks the bundle against the dashboard's EchartsIntegrity (the
# sha384 the page also pins for the CDN copy), and keeps a copy in the
# user's cache, so another clone, or this one after git clean, starts
# without the registry.
set -euo pipefail
cd "$(dirname "$0")/../dashboard/assets"
want=$(sed -n 's/.*"echarts": *"\([^"]*\)".*/\1/p' package.json)
integrity=$(sed -n 's/.*EchartsIntegrity *= *"sha384-\([^"]*\)".*/\1/p' ../assets.go)
out=../static/echarts.min.js
cache="${XDG_CACHE_HOME:-$HOME/.cache}/pulse/echarts-$want.min.js"
mkdir -p ../static
if [ -s "$out" ] && [ -f .fetched ] && [ "$(cat .fetched)" = "$want" ]; then
	exit 0
fi

# sha384 prints the base64 sha384 of a file, as an integrity attribute
# has it, or nothing when openssl is missing (npm has checked the tarball).
sha384() { command -v openssl >/dev/null && openssl dgst -sha384 -binary "$1" | base64 | tr -d '\n' || true; }

verified() {
	local got
	got=$(sha384 "$1")
	[ -z "$got" ] || [ -z "$integrity" ] || [ "$got" = "$integrity" ]
}

if [ -s "$cache" ] && verified "$cache"; then
	cp "$cache" "$out"
	echo "$want" > .fetched
	echo "fetch-echarts: echarts $want from $cache"
	exit 0
fi

command -v npm >/dev/null || { echo "fetch-echarts: npm is missing; install it with: apt-get install npm" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npm pack "echarts@$want" --prefer-offline --silent --pack-destination "$tmp" >/dev/null
tar -xzf "$tmp/echarts-$want.tgz" -C "$tmp" package/dist/echarts.min.js
if ! verified "$tmp/package/dist/echarts.min.js"; then
	echo "fetch-echarts: echarts $want does not match EchartsIntegrity in dashboard/assets.go" >&2
	exit 1
fi
cp "$tmp/package/dist/echarts.min.js" "$out"
mkdir -p "$(dirname "$cache")" && cp "$out" "$cache" || true
echo "$want" > .fetched
echo "fetch-echarts: echarts $want -> dashboard/static/echarts.min.js"
