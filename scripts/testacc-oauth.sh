#!/usr/bin/env bash
# OAuth 2.0 acceptance tests alone (`make testacc-oauth`): the oauth-VERSION
# stages of scripts/testacc.sh, which `make test` runs with the others. For
# each version, scripts/brokers.sh starts a node with the
# rabbitmq_auth_backend_oauth2 plugin and a fresh signing key
# (scripts/oauth-node.sh: oauth310 on ports 5675/15675, oauth43 on
# 5676/15676), the tests TestAccOAuth2_* and TestAccBearerToken_* run against
# it with Terraform and a token endpoint of their own on loopback, and the
# node is stopped. A skipped test counts as a failure.
#
# Variables: OAUTH_VERSIONS (default "3.10 4.3"), and those of
# scripts/testacc.sh (TERRAFORM, ACC_TIMEOUT, KEEP_BROKERS, ...).
# Prints "==> OAuth 2.0 acceptance: oauth 3.10 PASS, oauth 4.3 PASS" and exits
# non-zero when any run fails.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
versions="${OAUTH_VERSIONS:-3.10 4.3}"
stages=()
for v in $versions; do
	rm -f "build/acc-oauth-$v.result"
	stages+=("oauth-$v")
done

ACC_STAGES="${stages[*]}" BROKERS="" BROKER="" TF_ACC_CLIS="" ./scripts/testacc.sh
rc=$?

summary=()
for v in $versions; do
	line="$(head -n 1 "build/acc-oauth-$v.result" 2>/dev/null)"
	if [[ -n "$line" && "$line" != *FAIL ]]; then summary+=("oauth $v PASS"); else summary+=("oauth $v FAIL"); fi
done
echo "==> OAuth 2.0 acceptance: $(IFS=,; echo "${summary[*]}" | sed 's/,/, /g')"
exit "$rc"
