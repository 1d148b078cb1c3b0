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
# A cold build takes 2-4 minutes on an idle 2-core machine (about 5-6
# CPU-minutes, 12-15 minutes under heavy load), with a warm Go build cache
# about 30 s; a cached binary costs nothing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="${OPENTOFU_VERSION:-v1.12.6}"
[[ "$version" == v* ]] || version="v$version"
cache="${QUEUEY_CACHE:-/var/cache/queuey}"
bin="${TOFU_BIN:-$cache/cli/tofu-${version#v}/tofu}"
nice_level="${NICE:-10}"
product=OpenTofu
# shellcheck source=scripts/lib/cli-build.sh
. "$root/scripts/lib/cli-build.sh"

cli_cached && exit 0
cli_fetch github.com/opentofu/opentofu

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
cli_install
