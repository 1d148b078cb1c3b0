# The functions the scripts share; sourced after setting me (the log prefix).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="${QUEUEY_CACHE:-/var/cache/queuey}"

log() { printf '%s: %s\n' "$me" "$*" >&2; }
die() {
	log "$*"
	exit 1
}

# as_root CMD…: CMD as root, directly or through password-less sudo.
as_root() {
	if [[ $EUID -eq 0 ]]; then "$@"; else sudo -n "$@"; fi
}

apt_install() {
	log "installing $* with apt-get"
	as_root apt-get update -qq >&2 && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

# load_env FILE: exports the assignments of FILE.
load_env() {
	set -a
	# shellcheck disable=SC1090
	. "$1"
	set +a
}

# acc ARGS…: tools/acc (the stages, brokers and waits), built when its
# sources are newer than build/bin/queuey-acc (renamed into place: a
# running one keeps its file).
acc() {
	local bin="$root/build/bin/queuey-acc"
	if [[ ! -x "$bin" || -n "$(find "$root/tools/acc" -newer "$bin" -print -quit)" ]]; then
		(cd "$root/tools" && go build -o "$bin.$$" ./acc && mv -f "$bin.$$" "$bin") || return 1
	fi
	"$bin" "$@"
}
