#!/usr/bin/env bash
# OAuth 2.0 acceptance tests (TestAccOAuth2_*, TestAccBearerToken_*): for each
# version in OAUTH_VERSIONS, starts a broker node with the
# rabbitmq_auth_backend_oauth2 plugin (scripts/oauth-node.sh: oauth310 on
# ports 5675/15675, oauth43 on 5676/15676), runs the tests against it with
# Terraform, and stops the node. The tests sign their tokens with the node's
# key and serve them from a token endpoint of their own on loopback.
#
# Variables:
#   OAUTH_VERSIONS   broker versions, in order (default "3.10 4.3")
#   TERRAFORM        Terraform binary (default: terraform on PATH)
#   ACC_TIMEOUT      go test -timeout (default 20m)
#   ACC_SUMMARY_FILE if set, the one-line summary is also written there
# A skipped test counts as a failure here: these tests have what they need.
# Prints "==> OAuth 2.0 acceptance: oauth 3.10 PASS, oauth 4.3 PASS" and exits
# non-zero when any run fails. The normal acceptance run skips these tests.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="$root/build"
mkdir -p "$build_dir"

versions="${OAUTH_VERSIONS:-3.10 4.3}"
timeout="${ACC_TIMEOUT:-20m}"
run='^(TestAccOAuth2_|TestAccBearerToken_)'
summary=()
failed=0

tf="$(command -v "${TERRAFORM:-terraform}" || true)"
if [[ -z "$tf" ]]; then
	echo "==> '${TERRAFORM:-terraform}' not found on PATH: install Terraform >= 1.8 or set TERRAFORM"
	exit 1
fi
: >"$build_dir/acc.terraformrc"

for v in $versions; do
	start=$SECONDS
	log="$build_dir/acc-oauth-$v.log"
	echo "==> OAuth 2.0 broker $v: scripts/oauth-node.sh start $v"
	if ! node_env="$(./scripts/oauth-node.sh start "$v")"; then
		summary+=("oauth $v FAIL (no broker)")
		failed=1
		continue
	fi
	result=PASS
	echo "==> OAuth 2.0 acceptance tests (RabbitMQ $v): TF_ACC=1 go test ./internal/provider/ -run '$run' -count=1 -v"
	if ! (
		set -a
		eval "$node_env"
		set +a
		unset RABBITMQ_BEARER_TOKEN RABBITMQ_OAUTH2_TOKEN_URL RABBITMQ_OAUTH2_CLIENT_ID RABBITMQ_OAUTH2_CLIENT_SECRET
		TF_ACC=1 TF_ACC_TERRAFORM_PATH="$tf" TF_ACC_PROVIDER_HOST=registry.terraform.io TF_ACC_PROVIDER_NAMESPACE=queuey \
			TF_CLI_CONFIG_FILE="$build_dir/acc.terraformrc" CHECKPOINT_DISABLE=1 \
			go test ./internal/provider/ -run "$run" -count=1 -timeout "$timeout" -v 2>&1 | tee "$log"
	); then
		result=FAIL
	fi
	passed=$(grep -c -- '^--- PASS: ' "$log")
	skipped=$(grep -c -- '^--- SKIP: ' "$log")
	fails=$(grep -c -- '^--- FAIL: ' "$log")
	echo "==> OAuth 2.0 acceptance (RabbitMQ $v): $passed passed, $fails failed, $skipped skipped; log in ${log#"$root"/}"
	if [[ "$skipped" != 0 ]]; then
		grep -A1 -- '^--- SKIP: ' "$log" | sed 's/^/    /'
		result=FAIL
	fi
	if [[ "$passed" == 0 ]]; then
		result=FAIL
	fi
	./scripts/oauth-node.sh stop "$v" >/dev/null 2>&1 || echo "==> could not stop the OAuth 2.0 broker $v"
	echo "==> oauth $v: $result in $((SECONDS - start))s"
	summary+=("oauth $v $result")
	[[ "$result" == PASS ]] || failed=1
done

line="$(IFS=,; echo "${summary[*]}" | sed 's/,/, /g')"
[[ -n "${ACC_SUMMARY_FILE:-}" ]] && printf '%s\n' "$line" >"$ACC_SUMMARY_FILE"
echo "==> OAuth 2.0 acceptance: $line"
exit "$failed"
