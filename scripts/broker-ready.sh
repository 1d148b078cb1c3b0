#!/usr/bin/env bash
# Makes the machine's RabbitMQ broker with the management API ready and
# writes where it is to build/broker.env (or $BROKER_ENV_FILE); prints the
# same, less the password. In order: RABBITMQ_ENDPOINT (RABBITMQ_USERNAME,
# RABBITMQ_PASSWORD; default guest) when it answers; a broker on
# 127.0.0.1:15672; docker compose up -d where Docker answers; Debian's
# rabbitmq-server, installed when missing. Waits BROKER_WAIT_SECONDS (120).
set -euo pipefail
me=broker-ready
# shellcheck source=scripts/lib/queuey.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/queuey.sh"
env_file="${BROKER_ENV_FILE:-$root/build/broker.env}"
wait_seconds="${BROKER_WAIT_SECONDS:-120}"
local_endpoint=http://127.0.0.1:15672
tried=()

# ready ENDPOINT USER PASS [AMQP_URL]: writes the env file and exits.
ready() {
	mkdir -p "$(dirname "$env_file")"
	(
		umask 077
		echo "# Written by scripts/broker-ready.sh; load with: set -a; . $env_file; set +a"
		printf 'RABBITMQ_ENDPOINT=%q\nRABBITMQ_USERNAME=%q\nRABBITMQ_PASSWORD=%q\n' "$1" "$2" "$3"
		if [[ -n "${4:-}" ]]; then
			# amqp_endpoint of the dead-letter actions: the URL without credentials.
			printf 'RABBITMQ_AMQP_URL=%q\nRABBITMQ_AMQP_ENDPOINT=%q\n' "$4" "$(sed -E 's#^(amqps?://)[^@/]*@#\1#; s#/$##' <<<"$4")"
		fi
	) >"$env_file.tmp.$$"
	mv -f "$env_file.tmp.$$" "$env_file"
	[[ "${BROKER_READY_QUIET:-}" == 1 ]] || log "broker ready at $1 (settings in $env_file)"
	printf 'export RABBITMQ_ENDPOINT=%q\nexport RABBITMQ_USERNAME=%q\n# RABBITMQ_PASSWORD is in %s\n' "$1" "$2" "$env_file"
	if [[ -n "${4:-}" ]]; then printf 'export RABBITMQ_AMQP_URL=%q\n' "$4"; fi
	exit 0
}
ready_local() { ready "$local_endpoint" guest guest "${RABBITMQ_AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}"; }

fail() {
	log "FAILED: $*"
	log "tried, in order:"
	printf 'broker-ready:   - %s\n' "${tried[@]}" >&2
	cat >&2 <<'HELP'
broker-ready: what to do:
  - point at a running broker with the management plugin:
      export RABBITMQ_ENDPOINT=http://host:15672 RABBITMQ_USERNAME=... RABBITMQ_PASSWORD=...
  - or start Docker and rerun (docker compose -f docker-compose.yml up -d);
  - or, on Debian/Ubuntu as root: apt-get install rabbitmq-server &&
      rabbitmq-plugins enable rabbitmq_management && rabbitmq-server -detached
HELP
	exit 1
}

if [[ -n "${RABBITMQ_ENDPOINT:-}" ]]; then
	user="${RABBITMQ_USERNAME:-guest}" pass="${RABBITMQ_PASSWORD:-guest}"
	why="$(acc wait -seconds 3 -user "$user" -password "$pass" "$RABBITMQ_ENDPOINT" 2>&1)" &&
		ready "$RABBITMQ_ENDPOINT" "$user" "$pass" "${RABBITMQ_AMQP_URL:-}"
	tried+=("RABBITMQ_ENDPOINT as $user: $why")
	log "WARNING: RABBITMQ_ENDPOINT as $user: $why; falling back to a local broker with guest/guest"
fi

acc wait -seconds 0 "$local_endpoint" 2>/dev/null && ready_local
tried+=("$local_endpoint as guest: no answer")

if command -v docker >/dev/null && timeout 10 docker info >/dev/null 2>&1; then
	compose=(docker compose)
	docker compose version >/dev/null 2>&1 || compose=(docker-compose)
	log "starting RabbitMQ with ${compose[*]} (docker-compose.yml)"
	if "${compose[@]}" -f "$root/docker-compose.yml" up -d >&2 && acc wait -seconds "$wait_seconds" "$local_endpoint"; then
		ready_local
	fi
	tried+=("${compose[*]} up -d of docker-compose.yml: failed or not ready in ${wait_seconds}s")
else
	tried+=("Docker: no engine answers 'docker info'")
fi

export PATH="$PATH:/usr/sbin:/sbin"
if ! command -v rabbitmq-server >/dev/null; then
	# A policy-rc.d that says no (101) keeps the maintainer scripts from
	# starting the service through init, which a container lacks.
	made_policy=""
	[[ -e /usr/sbin/policy-rc.d ]] || { as_root sh -c "printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d" && made_policy=1; }
	installed=""
	command -v apt-get >/dev/null && apt_install --no-install-recommends rabbitmq-server && installed=1
	[[ -z "$made_policy" ]] || as_root rm -f /usr/sbin/policy-rc.d
	[[ -n "$installed" ]] || {
		tried+=("Debian rabbitmq-server: not installed, and apt-get missing or failed")
		fail "no broker could be had"
	}
	# A node named after a host name that does not resolve cannot start.
	grep -qs '^NODENAME=' /etc/rabbitmq/rabbitmq-env.conf || as_root sh -c "echo NODENAME=rabbit@localhost >>/etc/rabbitmq/rabbitmq-env.conf" || true
fi

# rmq SECONDS CMD…: a RabbitMQ CLI command as root, with a time limit.
rmq() { as_root timeout "$1" "${@:2}"; }
# start_node starts the node in the background without the descriptors this script inherited
# beyond stdin, stdout and stderr (a lock or a pipe of the caller would stay held as long as the
# node runs); stdin is /dev/null.
start_node() (
	for fd in /proc/$BASHPID/fd/*; do
		fd="${fd##*/}"
		if ((fd > 2)); then eval "exec $fd>&-" 2>/dev/null || true; fi
	done
	as_root rabbitmq-server -detached </dev/null
)
offline=(--offline)
rmq 30 rabbitmq-diagnostics -q ping >/dev/null 2>&1 && offline=()
log "enabling the management plugin"
rmq 120 rabbitmq-plugins enable "${offline[@]}" rabbitmq_management >&2 || log "WARNING: rabbitmq-plugins enable rabbitmq_management failed"
# A node that runs but whose management API does not come ready (no answer, or HTTP 5xx: the
# node's applications stopped, e.g. after it ran out of file descriptors) is stopped here and
# started again below.
if ((${#offline[@]} == 0)); then
	rc=0
	acc wait -refused -seconds 60 "$local_endpoint" 2>/dev/null || rc=$?
	((rc == 0)) && ready_local
	if ((rc == 1)); then
		log "the node runs, but its management API is not ready after 60s: restarting the node"
		rmq 120 rabbitmqctl stop >&2 || log "WARNING: rabbitmqctl stop failed"
		offline=(--offline)
	fi
fi
if ((${#offline[@]})); then
	log "starting the node: rabbitmq-server -detached"
	start_node >&2 || {
		tried+=("rabbitmq-server -detached: failed")
		fail "the RabbitMQ node did not start; see /var/log/rabbitmq/"
	}
fi

log "waiting up to ${wait_seconds}s for $local_endpoint/api/overview"
rc=0
acc wait -refused -seconds "$wait_seconds" "$local_endpoint" || rc=$?
if ((rc == 3)); then
	# The API refuses guest: add the default user when it is missing (never
	# change the password of an existing one).
	if ! rmq 30 rabbitmqctl -q list_users 2>/dev/null | awk '{print $1}' | grep -qx guest; then
		log "user guest is missing: adding guest/guest (administrator, all permissions on /)"
		{ rmq 30 rabbitmqctl add_user guest guest && rmq 30 rabbitmqctl set_user_tags guest administrator &&
			rmq 30 rabbitmqctl set_permissions -p / guest '.*' '.*' '.*'; } >&2 || log "WARNING: could not add the user guest"
	else
		log "user guest exists but is refused (HTTP 401): its password is not 'guest', or loopback_users / its tags forbid it"
	fi
	rc=0
	acc wait -seconds "$wait_seconds" "$local_endpoint" || rc=$?
fi
((rc != 0)) || ready_local
tried+=("Debian rabbitmq-server: management API at $local_endpoint not ready after ${wait_seconds}s")
fail "no broker could be had"
