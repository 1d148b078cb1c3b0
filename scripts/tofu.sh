#!/usr/bin/env bash
# Provide an OpenTofu CLI of a given version, built from source fetched through
# the Go module proxy (the only place this project's machines can fetch it from)
# into a cache outside the clone, like the broker chroots and scripts/terraform.sh.
#
#   scripts/tofu.sh            build the wanted OpenTofu unless the cached binary
#                              already is that version; prints its path on the last line
#
# Variables: OPENTOFU_VERSION (default v1.12.6; the acceptance stages also use
# v1.10.10), QUEUEY_CACHE (default /var/cache/queuey; the binary goes to
# $QUEUEY_CACHE/cli/tofu-VERSION/tofu), TOFU_BIN (another place for it), NICE
# (default 10: the build runs under `nice -n $NICE`).
#
# OpenTofu's go.mod has replace directives, so `go install ...@version` refuses
# it: instead download the module, copy it somewhere writable and build
# ./cmd/tofu there the way OpenTofu's release build does (CGO off, -trimpath,
# version.dev=no so that `tofu version` prints the plain release version).
# A cold build takes 4-10 minutes on 2 cores (about 12 CPU-minutes), with a
# warm Go build cache about 15-40 s; a cached binary costs nothing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="${OPENTOFU_VERSION:-v1.12.6}"
[[ "$version" == v* ]] || version="v$version"
cache="${QUEUEY_CACHE:-/var/cache/queuey}"
bin="${TOFU_BIN:-$cache/cli/tofu-${version#v}/tofu}"
nice_level="${NICE:-10}"

as_root() {
	if [[ $EUID -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

have_version() {
	[[ -x "$bin" ]] || return 1
	local out
	# The whole output, not `| head -n 1`: under pipefail, head closing the
	# pipe early can fail the check with SIGPIPE.
	out="$(CHECKPOINT_DISABLE=1 "$bin" version 2>/dev/null)" || return 1
	# Any line: with TF_CLI_CONFIG_FILE naming a missing file, OpenTofu 1.12
	# prints its warning about it on stdout, before the version.
	[[ $'\n'"$out"$'\n' == *$'\n'"OpenTofu $version"$'\n'* ]]
}

if have_version; then
	echo "==> tofu: $bin is OpenTofu $version (cached)" >&2
	echo "$bin"
	exit 0
fi

echo "==> tofu: building OpenTofu $version from the Go module proxy into $bin" >&2
start=$SECONDS
bin_dir="$(dirname "$bin")"
if ! mkdir -p "$bin_dir" 2>/dev/null || [[ ! -w "$bin_dir" ]]; then
	as_root mkdir -p "$bin_dir"
	as_root chown "$(id -u):$(id -g)" "$bin_dir"
fi

# Module download: GOFLAGS may carry flags (e.g. -mod=vendor) meant for this repo.
json="$(cd "$root" && GOFLAGS= go mod download -json "github.com/opentofu/opentofu@$version")"
dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")"
if [[ -z "$dir" || ! -d "$dir" ]]; then
	echo "==> tofu: go mod download gave no module directory:" >&2
	echo "$json" >&2
	exit 1
fi

src="$(mktemp -d "$bin_dir/src.XXXXXX")"
tmp="$bin.tmp.$$"
trap 'rm -rf "$src" "$tmp"' EXIT
trap 'exit 130' INT TERM
cp -R "$dir/." "$src"
chmod -R u+w "$src"

# -buildvcs=false: the copied tree is no git checkout (the machine sets it in
# GOFLAGS too, but a developer's may not). CGO_ENABLED=0 as in OpenTofu's
# release build: no C toolchain needed, a static binary.
(
	cd "$src"
	GOFLAGS="-buildvcs=false -mod=readonly" CGO_ENABLED=0 GOWORK=off \
		nice -n "$nice_level" go build -trimpath \
		-ldflags "-s -w -X 'github.com/opentofu/opentofu/version.dev=no'" \
		-o "$tmp" ./cmd/tofu
)
mv -f "$tmp" "$bin"
rm -rf "$src"
trap - EXIT

if ! have_version; then
	echo "==> tofu: built $bin but '$bin version' does not print 'OpenTofu $version':" >&2
	"$bin" version >&2 || true
	exit 1
fi
echo "==> tofu: built OpenTofu $version in $((SECONDS - start))s" >&2
echo "$bin"
