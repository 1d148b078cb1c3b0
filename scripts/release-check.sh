#!/usr/bin/env bash
# make release-check: builds a snapshot release as the release workflow does
# (goreleaser of tools/go.mod, signed with a throwaway GPG key), checks it as
# the registry does, installs it from a filesystem mirror as users do with
# each CLI of RELEASE_CHECK_CLIS (TERRAFORM, TOFU), and sees bad input
# refused; the steps: CONTRIBUTING.md, "Releasing". Logs in
# build/release-check/logs/.
set -euo pipefail

me=release-check
# shellcheck source=scripts/lib/queuey.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/queuey.sh"
cd "$root"
name="terraform-provider-queuey"
work="$root/build/release-check"
logs="$work/logs"
# The platforms of .goreleaser.yml (goos x goarch less its ignores); the check
# fails when the release has others, so the two lists change together.
platforms=(darwin_amd64 darwin_arm64 freebsd_386 freebsd_amd64 freebsd_arm freebsd_arm64
	linux_386 linux_amd64 linux_arm linux_arm64 windows_386 windows_amd64 windows_arm64)
lock_platforms=(linux_amd64 darwin_arm64 windows_amd64)
host="$(go env GOOS)_$(go env GOARCH)"
start=$SECONDS
temps=()
queues=()

say() { printf '==> release-check: %s\n' "$*"; }
fail() {
	printf '==> release-check: FAIL: %s\n' "$*" >&2
	exit 1
}
# run LOG CMD...: run CMD, its output in logs/LOG; on failure show its end.
run() {
	local log="$logs/$1"
	shift
	if ! "$@" >"$log" 2>&1; then
		echo "--- $log (last lines)" >&2
		tail -n 30 "$log" >&2
		fail "$(basename "$1") ${2:-} failed (log: ${log#"$root"/})"
	fi
}
# refused LOG WHAT PATTERN CMD...: CMD must fail, and its output say why:
# PATTERN must match a paragraph of it (lines joined), which is shown.
refused() {
	local log="$logs/$1" what="$2" pattern="$3" why
	shift 3
	if "$@" >"$log" 2>&1; then
		fail "$what: succeeded, but must fail (log: ${log#"$root"/})"
	fi
	why="$(awk -v RS= -v p="$pattern" '{gsub(/[ \t\n]+/, " ")} $0 ~ p {print; exit}' "$log")"
	[[ -n "$why" ]] || fail "$what: failed, but not with '$pattern' (log: ${log#"$root"/})"
	say "bad input refused as it must be: $what:"
	echo "      $why"
}
since() { echo "$((SECONDS - $1))s"; }

cleanup() {
	local q
	for q in "${queues[@]}"; do
		for n in "$q" "$q.dead"; do
			curl -s -o /dev/null -u "$RABBITMQ_USERNAME:$RABBITMQ_PASSWORD" -X DELETE \
				"${RABBITMQ_ENDPOINT%/}/api/queues/%2F/$n" || true
		done
	done
	local d
	for d in "${temps[@]}"; do
		GNUPGHOME="$d" gpgconf --kill gpg-agent 2>/dev/null || true
		rm -rf "$d"
	done
}
trap cleanup EXIT

# h1_of_zip ZIP: Terraform's h1: hash of a provider zip (Go's dirhash.Hash1:
# the SHA-256 of the sorted "sha256  name" lines of its files), computed here
# without Terraform.
h1_of_zip() {
	local d
	d="$(mktemp -d)"
	unzip -q "$1" -d "$d"
	(
		cd "$d"
		find . -type f -printf '%P\n' | LC_ALL=C sort | while IFS= read -r f; do
			printf '%s  %s\n' "$(sha256sum "$f" | cut -d ' ' -f 1)" "$f"
		done
	) | sha256sum | cut -d ' ' -f 1 | xxd -r -p | base64 | sed 's/^/h1:/'
	rm -rf "$d"
}

# new_gnupghome VAR: a private temporary GNUPGHOME into VAR; at exit its
# agent is stopped and it is deleted (so not made in a command substitution,
# whose subshell would lose the record).
new_gnupghome() {
	local home_
	home_="$(mktemp -d "${TMPDIR:-/tmp}/release-check-gpg.XXXXXX")"
	chmod 700 "$home_"
	temps+=("$home_")
	printf -v "$1" '%s' "$home_"
}

build_release() {
	local t=$SECONDS gr fpr
	new_gnupghome GNUPGHOME
	export GNUPGHOME
	# RSA: the key type the Terraform Registry accepts.
	run gpg-key.log gpg --batch --passphrase '' --quick-gen-key \
		"queuey release-check (throwaway) <release-check@queuey.invalid>" rsa2048 sign 1d
	fpr="$(gpg --batch --with-colons --list-secret-keys 2>/dev/null | awk -F: '$1 == "fpr" {print $10; exit}')"
	[[ -n "$fpr" ]] || fail "no fingerprint of the throwaway GPG key"
	gpg --batch --armor --export "$fpr" >"$work/signing-key.asc"
	say "throwaway signing key $fpr in a temporary GNUPGHOME"

	# The tool's binary, built (and cached) by the go command of tools/go.mod.
	run goreleaser-tool.log go -C tools tool -n goreleaser
	gr="$(tail -n 1 "$logs/goreleaser-tool.log")"
	say "goreleaser $("$gr" --version 2>&1 | awk '/^GitVersion:/ {print $2}') (tools/go.mod); building every platform"
	GPG_FINGERPRINT="$fpr" run goreleaser.log "$gr" release --snapshot --clean
	version="$(jq -r .version dist/metadata.json)"
	[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || fail "goreleaser's version '$version' is not a semantic version"
	say "built $name $version: $(ls dist/*.zip | wc -l) zips, the SHA256SUMS and its signature ($(since "$t"))"
}

stage_release() {
	rel="$work/release"
	sums="${name}_${version}_SHA256SUMS"
	mkdir -p "$rel"
	cp dist/*.zip dist/"$sums" dist/"$sums".sig "$rel"/
	# The workflow uploads the manifest under this name (release.extra_files).
	cp terraform-registry-manifest.json "$rel/${name}_${version}_manifest.json"

	local want got p
	want="$(for p in "${platforms[@]}"; do echo "${name}_${version}_$p.zip"; done | sort)"
	got="$(cd "$rel" && ls -1 ./*.zip | sed 's|^\./||' | sort)"
	[[ "$want" == "$got" ]] || fail "the zips are not the platforms of .goreleaser.yml: got"$'\n'"$got"
}

verify_release() {
	local n out d
	n="$(cd "$rel" && sha256sum --strict -c "$sums" | tee "$logs/sha256sum.log" | grep -c ': OK$')" ||
		fail "sha256sum -c $sums failed (log: build/release-check/logs/sha256sum.log)"
	grep -q " ${name}_${version}_manifest.json\$" "$rel/$sums" || fail "$sums does not cover the registry manifest"
	((n == ${#platforms[@]} + 1)) || fail "$sums covers $n files, want ${#platforms[@]} zips and the manifest"
	say "sha256sum -c $sums: $n files OK (${#platforms[@]} zips and the registry manifest)"

	# Verified as a user would: a keyring holding only the public key.
	new_gnupghome d
	run gpg-import.log env GNUPGHOME="$d" gpg --batch --import "$work/signing-key.asc"
	run gpg-verify.log env GNUPGHOME="$d" gpg --batch --verify "$rel/$sums.sig" "$rel/$sums"
	say "gpg --verify $sums.sig: $(grep -m 1 -o 'Good signature from "[^"]*"' "$logs/gpg-verify.log")"

	for p in "${platforms[@]}"; do
		local bin="${name}_v${version}"
		[[ "$p" == windows_* ]] && bin+=".exe"
		unzip -Z1 "$rel/${name}_${version}_$p.zip" | grep -x -- "$bin" >/dev/null || fail "the $p zip has no $bin"
	done
	d="$(mktemp -d)"
	temps+=("$d")
	unzip -q "$rel/${name}_${version}_linux_amd64.zip" -d "$d"
	out="$("$d/${name}_v${version}" -version)"
	[[ "$out" == "$name $version" ]] || fail "the linux_amd64 binary's -version printed '$out', want '$name $version'"
	say "every zip holds ${name}_v${version}; the linux_amd64 binary's -version prints: $out"
}

bad_sums_and_signature() {
	local bad="$work/bad-release" d
	rm -rf "$bad"
	cp -R "$rel" "$bad"
	# One hex digit of the first checksum changed.
	sed -i '1{s/^0/1/;t;s/^./0/}' "$bad/$sums"
	refused sha256sum-bad.log "a SHA256SUMS that does not match the zips (sha256sum -c)" 'computed checksum did NOT match' \
		bash -c 'cd "$1" && sha256sum --strict --quiet -c "$2"' _ "$bad" "$sums"
	new_gnupghome d
	run gpg-import-bad.log env GNUPGHOME="$d" gpg --batch --import "$work/signing-key.asc"
	refused gpg-verify-bad-sums.log "that SHA256SUMS against its signature (gpg --verify)" 'BAD signature' \
		env GNUPGHOME="$d" gpg --batch --verify "$bad/$sums.sig" "$bad/$sums"
	cp "$rel/$sums" "$bad/$sums"
	flip_byte "$bad/$sums.sig" $(($(stat -c %s "$bad/$sums.sig") - 20))
	refused gpg-verify-bad-sig.log "a signature with one byte changed (gpg --verify)" 'BAD signature' \
		env GNUPGHOME="$d" gpg --batch --verify "$bad/$sums.sig" "$bad/$sums"
}

# flip_byte FILE OFFSET: invert the bits of one byte of FILE in place.
flip_byte() {
	local b
	b="$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')"
	printf "\\$(printf '%03o' $((b ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# make_mirror DIR REGISTRY ZIP...: a filesystem mirror in the packed layout.
make_mirror() {
	local dir="$1/$2/queuey/queuey"
	shift 2
	mkdir -p "$dir"
	cp -l "$@" "$dir"/
}

# tampered_zip ZIP OUT: ZIP with one byte of the provider binary's data
# changed and zipped again under the same names: a valid zip, other contents.
tampered_zip() {
	local d bin
	d="$(mktemp -d)"
	temps+=("$d")
	unzip -q "$1" -d "$d"
	bin="$(unzip -Z1 "$1" | grep -x "${name}_v.*")"
	flip_byte "$d/$bin" $(($(stat -c %s "$d/$bin") / 2))
	mapfile -t files < <(unzip -Z1 "$1")
	rm -f "$2" # a new zip, not an update of one (nor of a hard link to the release's)
	(cd "$d" && zip -q -X "$2" "${files[@]}")
	unzip -tq "$2" >/dev/null || fail "the tampered zip is not a valid zip"
	[[ "$(unzip -Z1 "$1")" == "$(unzip -Z1 "$2")" ]] || fail "the tampered zip's names differ"
	[[ "$(h1_of_zip "$1")" != "$(h1_of_zip "$2")" ]] || fail "the tampered zip has the same h1: hash"
}

# cli_config FILE MIRROR REGISTRY: a CLI configuration that installs
# queuey/queuey from MIRROR only, with no dev_overrides.
cli_config() {
	cat >"$1" <<EOF
provider_installation {
  filesystem_mirror {
    path    = "$2"
    include = ["$3/queuey/queuey"]
  }
  direct {
    exclude = ["$3/queuey/queuey"]
  }
}
EOF
}

# quickstart DIR QUEUE: examples/quickstart, pinned to the version, its queue
# renamed to QUEUE (an override file: the example's own files unchanged).
quickstart() {
	rm -rf "$1"
	mkdir -p "$1"
	cp examples/quickstart/*.tf "$1"/
	cat >"$1/release_check_override.tf" <<EOF
terraform {
  required_providers {
    queuey = {
      source  = "queuey/queuey"
      version = "$version"
    }
  }
}

locals {
  queue = "$2"
}
EOF
}

queue_status() {
	curl -s -o /dev/null -w '%{http_code}' -u "$RABBITMQ_USERNAME:$RABBITMQ_PASSWORD" \
		"${RABBITMQ_ENDPOINT%/}/api/queues/%2F/$1"
}

check_lock() {
	local lock="$1" registry="$2" p h n
	grep -q "provider \"$registry/queuey/queuey\"" "$lock" || fail "$lock has no $registry/queuey/queuey"
	grep -q "version *= \"$version\"" "$lock" || fail "$lock does not lock version $version"
	n="$(grep -c '"h1:' "$lock")"
	((n == ${#lock_platforms[@]})) || fail "$lock has $n h1: hashes, want ${#lock_platforms[@]}"
	for p in "${lock_platforms[@]}"; do
		h="$(h1_of_zip "$rel/${name}_${version}_$p.zip")"
		grep -qF "\"$h\"" "$lock" || fail "$lock lacks $p's $h"
	done
	! grep -q '"zh:' "$lock" || fail "$lock has zh: hashes, which a filesystem mirror cannot give"
}

# install_and_apply CLI BIN REGISTRY: steps 3 for one CLI.
install_and_apply() {
	local cli="$1" bin="$2" registry="$3" t=$SECONDS
	local dir="$work/$cli/quickstart" mirror="$work/$cli/mirror" q
	q="release-check-$cli-$(date +%s)-$RANDOM"
	queues+=("$q")
	make_mirror "$mirror" "$registry" "$rel"/*.zip
	cli_config "$work/$cli/cli.tfrc" "$mirror" "$registry"
	quickstart "$dir" "$q"
	export TF_CLI_CONFIG_FILE="$work/$cli/cli.tfrc" TOFU_CLI_CONFIG_FILE="$work/$cli/cli.tfrc"
	local tf=("$bin" -chdir="$dir")

	run "$cli-init.log" "${tf[@]}" init -input=false -no-color
	grep -q "Installed queuey/queuey v$version" "$logs/$cli-init.log" || fail "$cli init did not install queuey/queuey v$version"
	[[ -x "$dir/.terraform/providers/$registry/queuey/queuey/$version/$host/${name}_v$version" ]] ||
		fail "$cli init did not unpack the provider under .terraform/providers/$registry"
	say "$cli: init installed $registry/queuey/queuey $version from the filesystem mirror"

	run "$cli-lock.log" "${tf[@]}" providers lock -no-color -fs-mirror="$mirror" \
		"${lock_platforms[@]/#/-platform=}"
	check_lock "$dir/.terraform.lock.hcl" "$registry"
	say "$cli: providers lock: h1: hashes of ${lock_platforms[*]}, each the zip's own"

	TF_LOG_PROVIDER=INFO TF_LOG_PATH="$logs/$cli-apply.tflog" run "$cli-apply.log" "${tf[@]}" apply -auto-approve -input=false -no-color
	[[ "$(queue_status "$q")" == 200 && "$(queue_status "$q.dead")" == 200 ]] || fail "$cli apply: $q or $q.dead is not on the broker"
	grep -q "configuring the queuey provider.*version=$version" "$logs/$cli-apply.tflog" ||
		fail "$cli apply: the provider's log does not name version $version"
	run "$cli-destroy.log" "${tf[@]}" destroy -auto-approve -input=false -no-color
	[[ "$(queue_status "$q")" == 404 && "$(queue_status "$q.dead")" == 404 ]] || fail "$cli destroy: $q or $q.dead is still on the broker"
	say "$cli: apply declared $q and $q.dead (the provider logs version=$version); destroy deleted them"

	cp "$dir/.terraform.lock.hcl" "$work/$cli/lock.hcl"
	rm -rf "$dir/.terraform"
	run "$cli-init-locked.log" "${tf[@]}" init -input=false -no-color
	grep -q "Installed queuey/queuey v$version" "$logs/$cli-init-locked.log" || fail "$cli init with the lock file did not install"
	cmp -s "$dir/.terraform.lock.hcl" "$work/$cli/lock.hcl" || fail "$cli init with the lock file changed it"
	say "$cli: init with the lock file installed $version again, the lock file unchanged ($(since "$t"))"
	bad_mirrors "$cli" "$bin" "$registry"
}

# bad_mirrors CLI BIN REGISTRY: step 4's mirrors for one CLI.
bad_mirrors() {
	local cli="$1" bin="$2" registry="$3" dir="$work/$cli/quickstart"
	local m="$work/$cli/mirror-tampered" zip="${name}_${version}_${host}.zip"
	make_mirror "$m" "$registry" $(ls "$rel"/*.zip | grep -v "_$host.zip\$")
	tampered_zip "$rel/$zip" "$m/$registry/queuey/queuey/$zip"
	cli_config "$work/$cli/cli-tampered.tfrc" "$m" "$registry"
	rm -rf "$dir/.terraform"
	TF_CLI_CONFIG_FILE="$work/$cli/cli-tampered.tfrc" TOFU_CLI_CONFIG_FILE="$work/$cli/cli-tampered.tfrc" \
		refused "$cli-init-tampered.log" "$cli init with the lock file, the $host zip's binary changed by one byte" \
		"doesn't match any of the checksums previously recorded in the dependency lock file" \
		"$bin" -chdir="$dir" init -input=false -no-color

	m="$work/$cli/mirror-no-$host"
	make_mirror "$m" "$registry" $(ls "$rel"/*.zip | grep -v "_$host.zip\$")
	cli_config "$work/$cli/cli-no-$host.tfrc" "$m" "$registry"
	quickstart "$work/$cli/no-platform" "unused"
	TF_CLI_CONFIG_FILE="$work/$cli/cli-no-$host.tfrc" TOFU_CLI_CONFIG_FILE="$work/$cli/cli-no-$host.tfrc" \
		refused "$cli-init-no-platform.log" "$cli init from a mirror without $host" \
		"does not have a package available for your current platform, $host" \
		"$bin" -chdir="$work/$cli/no-platform" init -input=false -no-color
}

cli_bin() {
	case "$1" in
	terraform) command -v "${TERRAFORM:-terraform}" || fail "no terraform (TERRAFORM=${TERRAFORM:-terraform})" ;;
	opentofu)
		if [[ -n "${TOFU:-}" ]]; then
			command -v "$TOFU" || fail "no tofu (TOFU=$TOFU)"
		else
			./scripts/cli.sh opentofu "${OPENTOFU_VERSION:-v1.12.6}" | tail -n 1
		fi
		;;
	*) fail "unknown CLI '$1' in RELEASE_CHECK_CLIS (terraform, opentofu)" ;;
	esac
}

main() {
	rm -rf "$work"
	mkdir -p "$logs"
	# Nothing of the developer's CLI setup may help: no dev_overrides, no
	# plugin cache, no reattached provider, no network for the checkpoint.
	unset TF_PLUGIN_CACHE_DIR TF_REATTACH_PROVIDERS TF_CLI_ARGS TF_CLI_ARGS_init TF_DATA_DIR TF_LOG TF_LOG_PATH RABBITMQ_VHOST
	export CHECKPOINT_DISABLE=1

	./scripts/broker-ready.sh >/dev/null
	load_env build/broker.env

	build_release
	stage_release
	verify_release
	bad_sums_and_signature
	local cli
	for cli in ${RELEASE_CHECK_CLIS:-terraform opentofu}; do
		local bin registry=registry.terraform.io
		bin="$(cli_bin "$cli")"
		[[ "$cli" == opentofu ]] && registry=registry.opentofu.org
		say "$cli: $("$bin" version 2>/dev/null | sed -n 1p) ($bin)"
		install_and_apply "$cli" "$bin" "$registry"
	done
	say "PASS in $(since "$start")"
}

main "$@"
