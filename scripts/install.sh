# Sourced by setup.sh and bench.sh. install_missing NAME PACKAGE... installs
# the given Debian packages with apt-get (through sudo when not root), or
# exits saying what to install when it cannot.
install_missing() {
	local who=$1
	shift
	[ $# -gt 0 ] || return 0
	local sudo=""
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null; then sudo="sudo"; else
			echo "$who: missing $*; install them with: apt-get install $*" >&2
			exit 1
		fi
	fi
	if ! command -v apt-get >/dev/null; then
		echo "$who: missing $* and apt-get is not available; install them with your package manager" >&2
		exit 1
	fi
	echo "$who: installing $*"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq >/dev/null || true
	$sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null || {
		echo "$who: apt-get could not install $*; install them with: apt-get install $*" >&2
		exit 1
	}
}
