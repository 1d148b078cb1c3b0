#!/usr/bin/env bash
# Provide a Terraform CLI of a given version, built from source fetched through
# the Go module proxy (the only place this project's machines can fetch it from)
# into a cache outside the clone, like the broker chroots.
#
#   scripts/terraform.sh       build the wanted Terraform unless the cached binary
#                              already is that version; prints its path on the last line
#
# Variables: TERRAFORM_VERSION (default v1.16.4), QUEUEY_CACHE (default
# /var/cache/queuey; the binary goes to $QUEUEY_CACHE/cli/terraform-VERSION/terraform),
# TERRAFORM_BIN (another place for it), NICE (default 10: the build runs under
# `nice -n $NICE`).
#
# Terraform's `main` package is its module root, but `go install ...@version`
# refuses a go.mod with replace directives: instead download the module, copy it
# somewhere writable and build it there the way Terraform's release build does
# (CGO off, -trimpath, version.dev=no so that `terraform version` prints the
# plain release version). Since Terraform 1.10 the module zip leaves out the
# nested modules its go.mod replaces with ./internal/backend/remote-state/* and
# ./internal/legacy (each its own module, not part of the zip), so the copy is
# patched first:
#   1. go.mod loses the replace directives whose ./ target is not in the copy,
#      and the require lines of the same modules;
#   2. internal/backend/init/init.go loses the remote-state backends that talk
#      to a cloud or a database (azurerm, consul, cos, gcs, kubernetes, oss, pg,
#      s3, oci): their imports and their entries of the backends map. local,
#      remote, cloud, http and inmem stay. The tests only use local state; on a
#      version whose zip still has them (1.8, 1.9) this only saves build time.
# Each patch is checked, and the script fails loudly when one no longer applies
# (a file moved, another package imports a dropped module, ...). The build uses
# -mod=mod since go.sum then lists more than the build needs.
# A cold build takes 2-3 minutes on an idle 2-core machine (about 5 CPU-minutes,
# 12-15 minutes under heavy load), with a warm Go build cache about 30 s; a
# cached binary costs nothing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="${TERRAFORM_VERSION:-v1.16.4}"
[[ "$version" == v* ]] || version="v$version"
cache="${QUEUEY_CACHE:-/var/cache/queuey}"
bin="${TERRAFORM_BIN:-$cache/cli/terraform-${version#v}/terraform}"
nice_level="${NICE:-10}"
module=github.com/hashicorp/terraform
product=Terraform
# shellcheck source=scripts/lib/cli-build.sh
. "$root/scripts/lib/cli-build.sh"

cli_cached && exit 0
cli_fetch "$module"

# Patch 1: go.mod without the nested modules the zip leaves out.
dropped=()
while read -r mod target; do
	[[ -e "$src/$target" ]] && continue
	dropped+=("$mod")
done < <(sed -n 's#^replace \([^ ]*\) => \(\./[^ ]*\)$#\1 \2#p' "$src/go.mod")
for mod in "${dropped[@]}"; do
	# Both the replace directive and the require line (in a require block,
	# "\tMOD v0.0.0-..."); the module paths hold only [a-z0-9/.-].
	sed -i -e "\#^replace $mod => #d" -e "\#^[[:space:]]*$mod v[^ ]*\$#d" "$src/go.mod"
	if grep -q -F -w -- "$mod" "$src/go.mod"; then cli_die "patch 1: go.mod still names $mod after the patch"; fi
	if grep -r -l -F --include='*.go' -- "\"$mod\"" "$src" | grep -v -e '_test\.go$' -e '/internal/backend/init/init\.go$' | grep -q .; then
		cli_die "patch 1: a package other than internal/backend/init imports $mod, which the module zip lacks"
	fi
done
cli_log "patch 1: go.mod without ${#dropped[@]} nested modules missing from the zip"

# Patch 2: init.go without the cloud and database state backends.
init="$src/internal/backend/init/init.go"
[[ -f "$init" ]] || cli_die "patch 2: $init is gone"
removed=0
for b in azure consul cos gcs kubernetes oss pg s3 oci; do
	import="$module/internal/backend/remote-state/$b"
	alias="$(sed -n "s#^[[:space:]]*\([A-Za-z0-9_]*\) \"$import\"\$#\1#p" "$init")"
	if [[ -z "$alias" ]]; then
		# A backend this version does not have (oci came in 1.12) must not be
		# imported under another form either.
		if grep -q -F "\"$import\"" "$init"; then cli_die "patch 2: cannot find the alias of $import in init.go"; fi
		continue
	fi
	sed -i -e "\#^[[:space:]]*$alias \"$import\"\$#d" -e "/^[[:space:]]*\"[a-z0-9]*\": *func() backend.Backend { return $alias.New() },\$/d" "$init"
	if grep -q -w -- "$alias" "$init"; then cli_die "patch 2: init.go still uses $alias ($import) after the patch"; fi
	removed=$((removed + 1))
done
((removed > 0)) || cli_die "patch 2: no remote-state backend found in init.go"
cli_log "patch 2: init.go without $removed remote-state backends"

# -buildvcs=false: the copy is no git checkout. CGO_ENABLED=0 as in
# Terraform's release build: no C toolchain needed, a static binary.
(
	cd "$src"
	GOFLAGS="-buildvcs=false -mod=mod" CGO_ENABLED=0 GOWORK=off \
		nice -n "$nice_level" go build -trimpath \
		-ldflags "-s -w -X '$module/version.dev=no'" \
		-o "$tmp" .
)
cli_install
