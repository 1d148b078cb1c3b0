#!/usr/bin/env bash
# Provide an OpenTofu CLI at build/bin/tofu, built from source fetched through
# the Go module proxy (the only place this project's machines can fetch it from).
#
#   scripts/tofu.sh            build build/bin/tofu unless it is already there at
#                              the wanted version; prints its path on the last line
#
# Variables: OPENTOFU_VERSION (default v1.10.10), TOFU_BIN (default
# build/bin/tofu), NICE (default 10: the build runs under `nice -n $NICE`).
#
# OpenTofu's go.mod has replace directives, so `go install ...@version` refuses
# it: instead download the module, copy it somewhere writable and build
# ./cmd/tofu there the way OpenTofu's release build does (CGO off, -trimpath,
# version.dev=no so that `tofu version` prints the plain release version).
# A cold build takes 6-10 minutes on 2 cores (about 12 CPU-minutes), with a
# warm Go build cache about 15-40 s; a cached binary costs nothing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="${OPENTOFU_VERSION:-v1.10.10}"
[[ "$version" == v* ]] || version="v$version"
bin="${TOFU_BIN:-$root/build/bin/tofu}"
nice_level="${NICE:-10}"

have_version() {
	[[ -x "$bin" ]] || return 1
	local out
	# The whole output, not `| head -n 1`: under pipefail, head closing the
	# pipe early can fail the check with SIGPIPE.
	out="$("$bin" version 2>/dev/null)" || return 1
	[[ "${out%%$'\n'*}" == "OpenTofu $version" ]]
}

if have_version; then
	echo "==> tofu: $bin is OpenTofu $version (cached)" >&2
	echo "$bin"
	exit 0
fi

echo "==> tofu: building OpenTofu $version from the Go module proxy into $bin" >&2
start=$SECONDS

# Module download: GOFLAGS may carry flags (e.g. -mod=vendor) meant for this repo.
json="$(cd "$root" && GOFLAGS= go mod download -json "github.com/opentofu/opentofu@$version")"
dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")"
if [[ -z "$dir" || ! -d "$dir" ]]; then
	echo "==> tofu: go mod download gave no module directory:" >&2
	echo "$json" >&2
	exit 1
fi

src="$root/build/opentofu-src/$version"
rm -rf "$src"
rmdir "$(dirname "$src")" 2>/dev/null || true
mkdir -p "$(dirname "$src")" "$(dirname "$bin")"
cp -R "$dir" "$src"
chmod -R u+w "$src"

# -buildvcs=false: the copied tree is no git checkout (the machine sets it in
# GOFLAGS too, but a developer's may not). CGO_ENABLED=0 as in OpenTofu's
# release build: no C toolchain needed, a static binary.
tmp="$bin.tmp.$$"
trap 'rm -f "$tmp"' EXIT
(
	cd "$src"
	GOFLAGS="-buildvcs=false -mod=readonly" CGO_ENABLED=0 GOWORK=off \
		nice -n "$nice_level" go build -trimpath \
		-ldflags "-s -w -X 'github.com/opentofu/opentofu/version.dev=no'" \
		-o "$tmp" ./cmd/tofu
)
mv -f "$tmp" "$bin"
trap - EXIT
rm -rf "$src"
rmdir "$(dirname "$src")" 2>/dev/null || true

if ! have_version; then
	echo "==> tofu: built $bin but '$bin version' does not print 'OpenTofu $version':" >&2
	"$bin" version >&2 || true
	exit 1
fi
echo "==> tofu: built OpenTofu $version in $((SECONDS - start))s" >&2
echo "$bin"
