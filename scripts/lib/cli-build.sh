# Shared by scripts/terraform.sh and scripts/tofu.sh, which source it: the
# cache check, the module download into a writable copy and the install of a
# CLI built from the Go module proxy. The caller sets:
#   root     the clone (go mod download runs there)
#   product  the name `version` prints: Terraform or OpenTofu
#   version  the wanted version, with its leading v
#   bin      where the binary goes
# and calls cli_cached || { cli_fetch MODULE; <patch and build into $tmp>; cli_install; }.

cli_log() { printf '==> %s: %s\n' "${product,,}" "$*" >&2; }
cli_die() {
	cli_log "$*"
	exit 1
}
as_root() {
	if [[ $EUID -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

# cli_have_version: whether $bin runs and says it is $product $version.
cli_have_version() {
	[[ -x "$bin" ]] || return 1
	local out
	# The whole output, not `| head -n 1`: under pipefail, head closing the
	# pipe early can fail the check with SIGPIPE.
	out="$(CHECKPOINT_DISABLE=1 "$bin" version 2>/dev/null)" || return 1
	# Any line: with TF_CLI_CONFIG_FILE naming a missing file, OpenTofu 1.12
	# prints its warning about it on stdout, before the version.
	[[ $'\n'"$out"$'\n' == *$'\n'"$product $version"$'\n'* ]]
}

# cli_cached: when $bin already is the wanted version, says so and prints its path.
cli_cached() {
	cli_have_version || return 1
	cli_log "$bin is $product $version (cached)"
	echo "$bin"
}

# cli_fetch MODULE: downloads MODULE@$version through the module proxy and
# copies it into a writable $src beside $bin; $tmp is where the build goes.
# Both are removed on exit unless cli_install takes the build.
cli_fetch() {
	local module="$1" json dir bin_dir
	cli_log "building $product $version from the Go module proxy into $bin"
	cli_start=$SECONDS
	bin_dir="$(dirname "$bin")"
	if ! mkdir -p "$bin_dir" 2>/dev/null || [[ ! -w "$bin_dir" ]]; then
		as_root mkdir -p "$bin_dir"
		as_root chown "$(id -u):$(id -g)" "$bin_dir"
	fi
	# GOFLAGS may carry flags (e.g. -mod=vendor) meant for this repo.
	json="$(cd "$root" && GOFLAGS= go mod download -json "$module@$version")"
	dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")"
	[[ -n "$dir" && -d "$dir" ]] || cli_die "go mod download gave no module directory: $json"
	src="$(mktemp -d "$bin_dir/src.XXXXXX")"
	tmp="$bin.tmp.$$"
	trap 'rm -rf "$src" "$tmp"' EXIT
	trap 'exit 130' INT TERM
	cp -R "$dir/." "$src"
	chmod -R u+w "$src"
}

# cli_install: moves the build in $tmp to $bin, checks its version and
# prints its path.
cli_install() {
	mv -f "$tmp" "$bin"
	rm -rf "$src"
	trap - EXIT
	if ! cli_have_version; then
		cli_log "built $bin but '$bin version' does not print '$product $version':"
		"$bin" version >&2 || true
		exit 1
	fi
	cli_log "built $product $version in $((SECONDS - cli_start))s"
	echo "$bin"
}
