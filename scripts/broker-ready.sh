#!/usr/bin/env bash
# Makes a RabbitMQ broker with the management API ready for the acceptance
# tests and the demo, and writes where to find it to build/broker.env.
#
# In order:
#   1. RABBITMQ_ENDPOINT, when it is set and its management API answers
#      (credentials from RABBITMQ_USERNAME / RABBITMQ_PASSWORD, default guest/guest);
#   2. a local broker that already answers on http://127.0.0.1:15672 as guest/guest
#      (one started by an earlier run of this script, by step 3 or by step 4);
#   3. where a Docker engine answers: `docker compose up -d` of docker-compose.yml;
#   4. else Debian's rabbitmq-server: installed with apt-get when missing, the
#      management plugin enabled, the node started.
# Then it waits (BROKER_WAIT_SECONDS, default 120) until the API answers.
#
# Output: build/broker.env (or $BROKER_ENV_FILE), shell assignments of
# RABBITMQ_ENDPOINT, RABBITMQ_USERNAME, RABBITMQ_PASSWORD and, for a local broker,
# RABBITMQ_AMQP_URL; `set -a; . build/broker.env; set +a` loads them. The same
# lines, less the password, are printed on stdout. Progress goes to stderr.
#
# Running it again is harmless and, when the broker answers, takes a second.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
env_file="${BROKER_ENV_FILE:-$repo_root/build/broker.env}"
wait_seconds="${BROKER_WAIT_SECONDS:-120}"

local_endpoint="http://127.0.0.1:15672"
local_amqp="amqp://guest:guest@127.0.0.1:5672/"
local_user="guest"
local_pass="guest"

tried=()

log() { printf 'broker-ready: %s\n' "$*" >&2; }

# http_status URL USER PASS: prints the HTTP status of GET URL/api/overview
# ("000" when nothing answers).
http_status() {
	local url="${1%/}/api/overview"
	curl -s -o /dev/null -w '%{http_code}' --connect-timeout 3 -m 10 \
		-u "$2:$3" "$url" 2>/dev/null || true
}

# describe STATUS: a status from http_status in words.
describe() {
	case "$1" in
	000) echo "no answer" ;;
	401) echo "HTTP 401, credentials refused" ;;
	*) echo "HTTP $1" ;;
	esac
}

api_ok() { [[ "$(http_status "$@")" == 200 ]]; }

# wait_api URL USER PASS SECONDS: polls until the API answers 200.
wait_api() {
	local deadline=$((SECONDS + $4)) status
	while :; do
		status="$(http_status "$1" "$2" "$3")"
		[[ "$status" == 200 ]] && return 0
		if ((SECONDS >= deadline)); then
			log "$1/api/overview not ready after $4s: $(describe "$status")"
			return 1
		fi
		sleep 2
	done
}

# write_env ENDPOINT USER PASS [AMQP_URL]
write_env() {
	mkdir -p "$(dirname "$env_file")"
	local tmp="$env_file.tmp.$$"
	(
		umask 077
		{
			echo "# Written by scripts/broker-ready.sh; load with: set -a; . $env_file; set +a"
			printf 'RABBITMQ_ENDPOINT=%q\n' "$1"
			printf 'RABBITMQ_USERNAME=%q\n' "$2"
			printf 'RABBITMQ_PASSWORD=%q\n' "$3"
			if [[ -n "${4:-}" ]]; then
				printf 'RABBITMQ_AMQP_URL=%q\n' "$4"
				# amqp_endpoint of the dead-letter actions: the URL without credentials.
				printf 'RABBITMQ_AMQP_ENDPOINT=%q\n' "$(sed -E 's#^(amqps?://)[^@/]*@#\1#; s#/$##' <<<"$4")"
			fi
		} >"$tmp"
	)
	mv -f "$tmp" "$env_file"
	[[ "${BROKER_READY_QUIET:-}" == 1 ]] || log "broker ready at $1 (settings in $env_file)"
	printf 'export RABBITMQ_ENDPOINT=%q\n' "$1"
	printf 'export RABBITMQ_USERNAME=%q\n' "$2"
	echo "# RABBITMQ_PASSWORD is in $env_file"
	if [[ -n "${4:-}" ]]; then printf 'export RABBITMQ_AMQP_URL=%q\n' "$4"; fi
}

use_local() {
	write_env "$local_endpoint" "$local_user" "$local_pass" "${RABBITMQ_AMQP_URL:-$local_amqp}"
	exit 0
}

# as_root CMD...: runs CMD as root (directly, or through sudo when available).
as_root() {
	if [[ "$(id -u)" == 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		sudo -n env DEBIAN_FRONTEND=noninteractive "$@"
	else
		log "need root (or password-less sudo) to run: $*"
		return 1
	fi
}

fail() {
	log "FAILED: $*"
	log "tried, in order:"
	local t
	for t in "${tried[@]}"; do log "  - $t"; done
	cat >&2 <<'EOF'
broker-ready: what to do:
  - point at a running broker with the management plugin:
      export RABBITMQ_ENDPOINT=http://host:15672 RABBITMQ_USERNAME=... RABBITMQ_PASSWORD=...
  - or start Docker and rerun (docker compose -f docker-compose.yml up -d);
  - or, on Debian/Ubuntu as root: apt-get install rabbitmq-server &&
      rabbitmq-plugins enable rabbitmq_management && rabbitmq-server -detached
EOF
	exit 1
}

command -v curl >/dev/null || {
	tried+=("curl: not found")
	if command -v apt-get >/dev/null; then
		log "installing curl with apt-get"
		if ! { as_root apt-get update -qq >&2 &&
			as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >&2; }; then
			fail "curl is needed and could not be installed"
		fi
	else
		fail "curl is needed to talk to the management API; install it"
	fi
}

# 1. An endpoint given by the environment.
if [[ -n "${RABBITMQ_ENDPOINT:-}" ]]; then
	user="${RABBITMQ_USERNAME:-guest}"
	pass="${RABBITMQ_PASSWORD:-guest}"
	for _ in 1 2 3; do
		status="$(http_status "$RABBITMQ_ENDPOINT" "$user" "$pass")"
		[[ "$status" == 200 ]] && break
		sleep 1
	done
	if [[ "$status" == 200 ]]; then
		write_env "$RABBITMQ_ENDPOINT" "$user" "$pass" "${RABBITMQ_AMQP_URL:-}"
		exit 0
	fi
	tried+=("RABBITMQ_ENDPOINT=$RABBITMQ_ENDPOINT as $user: $(describe "$status")")
	log "WARNING: RABBITMQ_ENDPOINT=$RABBITMQ_ENDPOINT does not answer as $user ($(describe "$status"));" \
		"falling back to a local broker with guest/guest"
fi

# 2. A local broker that already answers.
if api_ok "$local_endpoint" "$local_user" "$local_pass"; then
	use_local
fi
tried+=("$local_endpoint as guest: no answer")

# 3. Docker.
if command -v docker >/dev/null && timeout 10 docker info >/dev/null 2>&1; then
	compose=()
	if docker compose version >/dev/null 2>&1; then
		compose=(docker compose)
	elif command -v docker-compose >/dev/null; then
		compose=(docker-compose)
	fi
	if ((${#compose[@]})); then
		log "starting RabbitMQ with ${compose[*]} (docker-compose.yml)"
		if "${compose[@]}" -f "$repo_root/docker-compose.yml" up -d >&2 &&
			wait_api "$local_endpoint" "$local_user" "$local_pass" "$wait_seconds"; then
			use_local
		fi
		tried+=("${compose[*]} up -d of docker-compose.yml: failed or not ready in ${wait_seconds}s")
	else
		tried+=("Docker engine answers, but neither 'docker compose' nor 'docker-compose' is installed")
	fi
else
	tried+=("Docker: no engine answers 'docker info'")
fi

# 4. Debian's rabbitmq-server.
export PATH="$PATH:/usr/sbin:/sbin"
if ! command -v rabbitmq-server >/dev/null; then
	if ! command -v apt-get >/dev/null; then
		tried+=("Debian rabbitmq-server: not installed, and no apt-get")
		fail "no broker could be had"
	fi
	log "installing rabbitmq-server with apt-get"
	# Debian's maintainer scripts would start the service through invoke-rc.d /
	# systemd, which a container does not have: a policy-rc.d that says 'no'
	# (exit 101) keeps them from trying; the node is started below instead.
	policy=/usr/sbin/policy-rc.d
	made_policy=""
	if [[ ! -e "$policy" ]]; then
		as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy" && made_policy=1
	fi
	installed=""
	if as_root apt-get update -qq >&2 &&
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends rabbitmq-server >&2; then
		installed=1
	fi
	if [[ -n "$made_policy" ]]; then as_root rm -f "$policy" || true; fi
	if [[ -z "$installed" ]]; then
		tried+=("apt-get install rabbitmq-server: failed")
		fail "no broker could be had"
	fi
	# A node named after a host name that does not resolve cannot start:
	# name a freshly installed node after localhost.
	envconf=/etc/rabbitmq/rabbitmq-env.conf
	if ! grep -qs '^NODENAME=' "$envconf"; then
		as_root sh -c "echo NODENAME=rabbit@localhost >> $envconf" || true
	fi
fi

# rmq SECONDS CMD...: a RabbitMQ CLI command, as root (Debian's wrappers want
# root or the rabbitmq user), with a time limit so that nothing hangs.
rmq() { as_root timeout "$1" "${@:2}"; }

node_running() { rmq 30 rabbitmq-diagnostics -q ping >/dev/null 2>&1; }

running=""
if node_running; then running=1; fi

log "enabling the management plugin"
if [[ -n "$running" ]]; then
	rmq 120 rabbitmq-plugins enable rabbitmq_management >&2 ||
		log "WARNING: rabbitmq-plugins enable rabbitmq_management failed"
else
	rmq 120 rabbitmq-plugins enable --offline rabbitmq_management >&2 ||
		log "WARNING: rabbitmq-plugins enable --offline rabbitmq_management failed"
fi

if [[ -z "$running" ]]; then
	log "starting the node: rabbitmq-server -detached"
	if ! as_root rabbitmq-server -detached >&2; then
		tried+=("rabbitmq-server -detached: failed")
		fail "the RabbitMQ node did not start; see /var/log/rabbitmq/"
	fi
fi

log "waiting up to ${wait_seconds}s for $local_endpoint/api/overview"
deadline=$((SECONDS + wait_seconds))
repaired=""
while :; do
	status="$(http_status "$local_endpoint" "$local_user" "$local_pass")"
	[[ "$status" == 200 ]] && use_local
	# The API answers but refuses guest: make sure the default user exists
	# (never change the password of an existing one).
	if [[ "$status" == 401 && -z "$repaired" ]]; then
		repaired=1
		if ! rmq 30 rabbitmqctl -q list_users 2>/dev/null | awk '{print $1}' | grep -qx guest; then
			log "user guest is missing: adding guest/guest (administrator, all permissions on /)"
			if ! { rmq 30 rabbitmqctl add_user guest guest >&2 &&
				rmq 30 rabbitmqctl set_user_tags guest administrator >&2 &&
				rmq 30 rabbitmqctl set_permissions -p / guest '.*' '.*' '.*' >&2; }; then
				log "WARNING: could not add the user guest"
			fi
		else
			log "user guest exists but is refused (HTTP 401): its password is not 'guest'," \
				"or loopback_users / the user's tags forbid it"
		fi
	fi
	if ((SECONDS >= deadline)); then
		tried+=("Debian rabbitmq-server: node $([[ -n "$running" ]] && echo "was running" || echo "started"), management API at $local_endpoint: $(describe "$status") after ${wait_seconds}s")
		fail "no broker could be had"
	fi
	sleep 2
done
