#!/usr/bin/env bash
# scripts/cli.sh terraform|opentofu VERSION: that CLI, built from its Go module
# (the Go module proxy is what the project's machines reach) into
# $QUEUEY_CACHE/cli unless cached there, as its release build does (CGO off,
# -trimpath, version.dev=no); prints its path on the last line. NICE (10) is
# the build's nice level.
set -euo pipefail
me="==> ${1:-cli}"
# shellcheck source=scripts/lib/queuey.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/queuey.sh"
version="${2:-}" && version="v${version#v}"
case "$1" in
terraform) module=github.com/hashicorp/terraform pkg=. product=Terraform bin="$cache/cli/terraform-${version#v}/terraform" ;;
opentofu) module=github.com/opentofu/opentofu pkg=./cmd/tofu product=OpenTofu bin="$cache/cli/tofu-${version#v}/tofu" ;;
*) die "usage: scripts/cli.sh terraform|opentofu VERSION" ;;
esac

# is_built: $bin runs and says it is $product $version (on any line: OpenTofu
# may print a warning first).
is_built() {
	local out
	[[ -x "$bin" ]] && out="$(CHECKPOINT_DISABLE=1 "$bin" version 2>/dev/null)" &&
		[[ $'\n'"$out"$'\n' == *$'\n'"$product $version"$'\n'* ]]
}
if is_built; then
	log "$bin is $product $version (cached)"
	echo "$bin"
	exit 0
fi

log "building $product $version from the Go module proxy into $bin"
start=$SECONDS
mkdir -p "$(dirname "$bin")" 2>/dev/null || { as_root mkdir -p "$(dirname "$bin")" && as_root chown "$(id -u):$(id -g)" "$(dirname "$bin")"; }
# GOFLAGS may carry flags (e.g. -mod=vendor) meant for this repo.
json="$(cd "$root" && GOFLAGS= go mod download -json "$module@$version")"
dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")"
[[ -n "$dir" && -d "$dir" ]] || die "go mod download gave no module directory: $json"
src="$(mktemp -d "$(dirname "$bin")/src.XXXXXX")"
tmp="$bin.tmp.$$"
trap 'rm -rf "$src" "$tmp"' EXIT
trap 'exit 130' INT TERM
cp -R "$dir/." "$src"
chmod -R u+w "$src"

# Terraform's module zip lacks the nested modules its go.mod replaces with ./
# paths: go.mod loses those, and init.go the cloud and database state
# backends that need them (the tests use local state). A patch that no
# longer applies fails here.
patch_terraform() {
	local mod target b import alias dropped=0 removed=0 init="$src/internal/backend/init/init.go"
	while read -r mod target; do
		[[ -e "$src/$target" ]] && continue
		sed -i -e "\#^replace $mod => #d" -e "\#^[[:space:]]*$mod v[^ ]*\$#d" "$src/go.mod"
		! grep -q -F -w -- "$mod" "$src/go.mod" || die "patch 1: go.mod still names $mod after the patch"
		if grep -r -l -F --include='*.go' -- "\"$mod\"" "$src" | grep -v -e '_test\.go$' -e '/internal/backend/init/init\.go$' | grep -q .; then
			die "patch 1: a package other than internal/backend/init imports $mod, which the module zip lacks"
		fi
		dropped=$((dropped + 1))
	done < <(sed -n 's#^replace \([^ ]*\) => \(\./[^ ]*\)$#\1 \2#p' "$src/go.mod")
	log "patch 1: go.mod without $dropped nested modules missing from the zip"
	[[ -f "$init" ]] || die "patch 2: $init is gone"
	for b in azure consul cos gcs kubernetes oss pg s3 oci; do
		import="$module/internal/backend/remote-state/$b"
		alias="$(sed -n "s#^[[:space:]]*\([A-Za-z0-9_]*\) \"$import\"\$#\1#p" "$init")"
		if [[ -z "$alias" ]]; then
			! grep -q -F "\"$import\"" "$init" || die "patch 2: cannot find the alias of $import in init.go"
			continue
		fi
		sed -i -e "\#^[[:space:]]*$alias \"$import\"\$#d" -e "/^[[:space:]]*\"[a-z0-9]*\": *func() backend.Backend { return $alias.New() },\$/d" "$init"
		! grep -q -w -- "$alias" "$init" || die "patch 2: init.go still uses $alias ($import) after the patch"
		removed=$((removed + 1))
	done
	((removed > 0)) || die "patch 2: no remote-state backend found in init.go"
	log "patch 2: init.go without $removed remote-state backends"
}
mod_flag=-mod=readonly
if [[ "$1" == terraform ]]; then
	patch_terraform
	mod_flag=-mod=mod # go.sum then lists more than the build needs
fi
(cd "$src" && GOFLAGS="-buildvcs=false $mod_flag" CGO_ENABLED=0 GOWORK=off nice -n "${NICE:-10}" \
	go build -trimpath -ldflags "-s -w -X '$module/version.dev=no'" -o "$tmp" "$pkg")
mv -f "$tmp" "$bin"
is_built || die "built $bin but '$bin version' does not print '$product $version'"
log "built $product $version in $((SECONDS - start))s"
echo "$bin"
