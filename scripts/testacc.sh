#!/usr/bin/env bash
# Acceptance tests of the provider against a broker, once per CLI: Terraform,
# then OpenTofu (`make testacc`, and the second stage of `make test`).
#
# Each run drives the CLI named below through terraform-plugin-testing, which
# takes it from TF_ACC_TERRAFORM_PATH, and serves the provider in-process under
# its real source address: registry.terraform.io/queuey/queuey for Terraform,
# registry.opentofu.org/queuey/queuey for OpenTofu (TF_ACC_PROVIDER_HOST and
# TF_ACC_PROVIDER_NAMESPACE).
#
# Variables:
#   TF_ACC_CLIS        CLIs to run against, in order (default "terraform opentofu";
#                      "tofu" is the same as "opentofu")
#   TERRAFORM          Terraform binary (default: terraform on PATH)
#   TOFU               OpenTofu binary (default: build/bin/tofu, built by
#                      scripts/tofu.sh at OPENTOFU_VERSION when missing)
#   ACC_RUN            go test -run pattern of the acceptance tests (default
#                      TestAcc). With a CLI other than Terraform the other tests
#                      of internal/provider (-skip TestAcc) run too: the unit
#                      stage of make test ran those that drive a CLI (functions,
#                      pure data sources) with Terraform only.
#   ACC_SKIP           go test -skip pattern (default: the OAuth 2.0 tests,
#                      which need a broker of their own: scripts/testacc-oauth.sh;
#                      and the restart and cluster tests, which need nodes of
#                      their own: make testresil)
#   ACC_PARALLEL       go test -parallel (default 2)
#   ACC_TIMEOUT        go test -timeout (default 60m)
#   ACC_SUMMARY_FILE   if set, the one-line summary is also written there
# Exits non-zero when any run fails.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="$root/build"
mkdir -p "$build_dir"

clis="${TF_ACC_CLIS:-terraform opentofu}"
run="${ACC_RUN:-TestAcc}"
skip="${ACC_SKIP:-^(TestAccOAuth2_|TestAccBearerToken_|TestAccRestart_|TestAccCluster_)}"
parallel="${ACC_PARALLEL:-2}"
timeout="${ACC_TIMEOUT:-60m}"
summary=()
failed=0

finish() {
	local line
	line="$(IFS=,; echo "${summary[*]}" | sed 's/,/, /g')"
	[[ -n "${ACC_SUMMARY_FILE:-}" ]] && printf '%s\n' "$line" >"$ACC_SUMMARY_FILE"
	echo "==> acceptance: $line"
	exit "$failed"
}

# report LABEL WHAT LOG: counts of the top-level tests of a go test -v log.
report() {
	local passed acc skipped fails
	passed=$(grep -c -- '^--- PASS: ' "$3")
	acc=$(grep -c -- '^--- PASS: TestAcc' "$3")
	skipped=$(grep -c -- '^--- SKIP: ' "$3")
	fails=$(grep -c -- '^--- FAIL: ' "$3")
	echo "==> $2 ($1): $passed passed ($acc TestAcc), $fails failed, $skipped skipped; log in ${3#"$root"/}"
	if [[ "$skipped" != 0 ]]; then
		grep -- '^--- SKIP: ' "$3" | sed 's/^/    /'
	fi
}

# cli_version BIN: "1.11.4" from "Terraform v1.11.4" / "OpenTofu v1.10.10".
cli_version() { "$1" version 2>/dev/null | awk 'NR == 1 {sub(/^v/, "", $2); print $2}'; }

echo "==> broker: scripts/broker-ready.sh"
if ! ./scripts/broker-ready.sh; then
	for cli in $clis; do summary+=("acceptance ($cli) FAIL (no broker)"); done
	failed=1
	finish
fi
set -a
# shellcheck disable=SC1091
. "$build_dir/broker.env"
set +a
# An empty CLI configuration: neither CLI reads ~/.terraformrc (the machine's
# TF_CLI_CONFIG_FILE may name a file that does not exist). OpenTofu 1.10 reads
# TF_CLI_CONFIG_FILE too.
: >"$build_dir/acc.terraformrc"

for cli in $clis; do
	case "$cli" in
	terraform)
		name=terraform
		bin="$(command -v "${TERRAFORM:-terraform}" || true)"
		host=registry.terraform.io
		if [[ -z "$bin" ]]; then
			echo "==> '${TERRAFORM:-terraform}' not found on PATH: install Terraform >= 1.8 or set TERRAFORM=/path/to/terraform"
		fi
		;;
	opentofu | tofu)
		name=opentofu
		host=registry.opentofu.org
		if [[ -n "${TOFU:-}" ]]; then
			bin="$(command -v "$TOFU" || true)"
			[[ -n "$bin" ]] || echo "==> TOFU=$TOFU not found"
		else
			echo "==> opentofu: scripts/tofu.sh (OpenTofu ${OPENTOFU_VERSION:-v1.10.10} in build/bin/tofu)"
			bin="$(./scripts/tofu.sh | tail -n 1)" || bin=""
		fi
		;;
	*)
		echo "==> unknown CLI '$cli' in TF_ACC_CLIS: use terraform and/or opentofu"
		summary+=("acceptance ($cli) FAIL (unknown CLI)")
		failed=1
		continue
		;;
	esac
	if [[ -z "$bin" ]]; then
		summary+=("acceptance ($name) FAIL (no binary)")
		failed=1
		continue
	fi
	label="$name $(cli_version "$bin")"
	start=$SECONDS
	result=PASS
	log="$build_dir/acc-$name.log"
	echo "==> acceptance tests ($label, $bin) against $RABBITMQ_ENDPOINT:" \
		"TF_ACC=1 go test ./internal/provider/ -count=1 -timeout $timeout -run $run -skip '$skip' -parallel $parallel -v"
	if ! TF_ACC=1 TF_ACC_TERRAFORM_PATH="$bin" \
		TF_ACC_PROVIDER_HOST="$host" TF_ACC_PROVIDER_NAMESPACE=queuey \
		TF_CLI_CONFIG_FILE="$build_dir/acc.terraformrc" CHECKPOINT_DISABLE=1 \
		go test ./internal/provider/ -count=1 -timeout "$timeout" -run "$run" -skip "$skip" -parallel "$parallel" -v 2>&1 |
		tee "$log"; then
		result=FAIL
	fi
	report "$label" "acceptance tests" "$log"
	# The unit stage of make test ran the CLI-driven unit tests (functions,
	# pure data sources, plan-time validation: resource.UnitTest) with the
	# terraform on PATH; run them with every other CLI here.
	if [[ "$name" != terraform ]]; then
		ulog="$build_dir/acc-$name-unit.log"
		echo "==> CLI-driven unit tests ($label): go test ./internal/provider/ -count=1 -skip TestAcc -v"
		if ! env -u TF_ACC TF_ACC_TERRAFORM_PATH="$bin" \
			TF_ACC_PROVIDER_HOST="$host" TF_ACC_PROVIDER_NAMESPACE=queuey \
			TF_CLI_CONFIG_FILE="$build_dir/acc.terraformrc" CHECKPOINT_DISABLE=1 \
			go test ./internal/provider/ -count=1 -timeout "$timeout" -skip TestAcc -v 2>&1 |
			tee "$ulog"; then
			result=FAIL
		fi
		report "$label" "CLI-driven unit tests" "$ulog"
	fi
	[[ "$result" == PASS ]] || failed=1
	echo "==> acceptance ($label): $result in $((SECONDS - start))s"
	summary+=("acceptance ($label) $result")
done
finish
