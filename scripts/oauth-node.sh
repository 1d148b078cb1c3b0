#!/usr/bin/env bash
# Starts or stops a RabbitMQ node that takes OAuth 2.0 tokens, for the OAuth
# acceptance tests (scripts/testacc-oauth.sh).
#
#   scripts/oauth-node.sh start VERSION    VERSION is 3.10 or 4.3
#   scripts/oauth-node.sh stop VERSION
#
# The node runs beside the other brokers through scripts/rabbitmq-node.sh, so
# no other test's broker changes:
#   3.10  oauth310  AMQP 5675, management 15675, distribution 25675
#   4.3   oauth43   AMQP 5676, management 15676, distribution 25676
# It enables rabbitmq_management and rabbitmq_auth_backend_oauth2, tries the
# oauth2 backend first and the internal one second (guest/guest still works
# for the tests' own set-up), and verifies tokens with a fresh HS256 key:
# resource_server_id "rabbitmq", so scopes are "rabbitmq.tag:management",
# "rabbitmq.configure:*/*", ... and the audience must be "rabbitmq". The
# management API of both versions takes "Authorization: Bearer <jwt>" once
# the backend is on; nothing else needs configuring for the HTTP API.
#
# start prints shell assignments on stdout: those of scripts/rabbitmq-node.sh
# (NODE_ENDPOINT, NODE_AMQP_URL, NODE_VERSION, NODE_LOG, ...), which make it a
# broker of scripts/brokers.sh (oauth-3.10, oauth-4.3), and for the tests:
#   RABBITMQ_OAUTH_ENDPOINT, RABBITMQ_OAUTH_AMQP_URL, RABBITMQ_OAUTH_VERSION,
#   RABBITMQ_OAUTH_SIGNING_KEY (base64url, no padding), RABBITMQ_OAUTH_KEY_ID,
#   RABBITMQ_OAUTH_RESOURCE_SERVER_ID
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
node_sh="$root/scripts/rabbitmq-node.sh"
resource_server_id=rabbitmq
key_id=queuey-test-key

usage() {
	echo "usage: $0 start|stop 3.10|4.3" >&2
	exit 2
}

[[ $# -eq 2 ]] || usage
action="$1" version="$2"
case "$version" in
3.10) name=oauth310 amqp=5675 mgmt=15675 dist=25675 ;;
4.3) name=oauth43 amqp=5676 mgmt=15676 dist=25676 ;;
*) usage ;;
esac

case "$action" in
stop)
	exec "$node_sh" stop "$name"
	;;
start) ;;
*) usage ;;
esac

# A running node keeps the key it started with: stop it, so that the key
# below is the one it verifies tokens with.
"$node_sh" stop "$name" >/dev/null 2>&1 || true

# A new key on every start: 32 random bytes, base64url without padding (the
# JWK "k" member). --fresh below makes the node read it.
key="$(head -c 32 /dev/urandom | base64 -w0 | tr '+/' '-_' | tr -d '=')"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/advanced.config" <<EOF
[
 {rabbit, [{auth_backends, [rabbit_auth_backend_oauth2, rabbit_auth_backend_internal]}]},
 {rabbitmq_auth_backend_oauth2, [
   {resource_server_id, <<"$resource_server_id">>},
   {key_config, [
     {default_key, <<"$key_id">>},
     {signing_keys, #{<<"$key_id">> => {map, #{<<"kty">> => <<"oct">>, <<"alg">> => <<"HS256">>, <<"k">> => <<"$key">>}}}}
   ]}
 ]}
].
EOF
chmod 0644 "$tmp/advanced.config"

env_out="$("$node_sh" start "$name" --version "$version" --amqp-port "$amqp" --mgmt-port "$mgmt" \
	--dist-port "$dist" --advanced "$tmp/advanced.config" \
	--plugins rabbitmq_management,rabbitmq_auth_backend_oauth2 --fresh)"
eval "$env_out"

# The node's own assignments (NODE_ENDPOINT, NODE_VERSION, NODE_LOG, ...) for
# scripts/brokers.sh, then what the tests read.
grep -E '^NODE_[A-Z_]*=' <<<"$env_out"

printf 'RABBITMQ_OAUTH_ENDPOINT=%q\n' "$NODE_ENDPOINT"
printf 'RABBITMQ_OAUTH_AMQP_URL=%q\n' "$NODE_AMQP_URL"
printf 'RABBITMQ_OAUTH_VERSION=%q\n' "$NODE_VERSION"
printf 'RABBITMQ_OAUTH_SIGNING_KEY=%q\n' "$key"
printf 'RABBITMQ_OAUTH_KEY_ID=%q\n' "$key_id"
printf 'RABBITMQ_OAUTH_RESOURCE_SERVER_ID=%q\n' "$resource_server_id"
