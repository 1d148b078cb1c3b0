#!/usr/bin/env bash
# The broker matrix of the tests: makes the named brokers ready and stops the
# ones it started.
#
#   scripts/brokers.sh start NAME…   make each broker ready; writes build/brokers/NAME.env
#   scripts/brokers.sh stop          stop every broker a `start` of this run started
#   scripts/brokers.sh list          print the broker names known
#
# Brokers (see BROKERS below; ports are the project's port plan):
#   3.10        the machine's own broker (scripts/broker-ready.sh: RABBITMQ_ENDPOINT
#               when it answers, else the one on 127.0.0.1:15672, Docker Compose, or
#               Debian 12's rabbitmq-server 3.10); never stopped here
#   4.0         node rabbit40: Debian trixie's RabbitMQ 4.0, AMQP 5674, management 15674
#   4.3         node rabbit43: Debian forky's RabbitMQ 4.3, AMQP 5673, management 15673
#   4.3-quorum  node queuey-quorum43: RabbitMQ 4.3 whose rabbitmq.conf sets
#               default_queue_type = quorum, AMQP 5684, management 15684 (fresh each run)
#   oauth-3.10  node oauth310: RabbitMQ 3.10 with the OAuth 2.0 backend and a fresh
#               signing key (scripts/oauth-node.sh), AMQP 5675, management 15675
#   oauth-4.3   node oauth43: the same on RabbitMQ 4.3, AMQP 5676, management 15676
#   resil       the nodes of the restart and cluster tests (scripts/resil-nodes.sh):
#               restart310 (3.10) and restart43 (4.3), and a 3-node 4.3 cluster c1-c3;
#               its endpoint is c1's (management 15681); always stopped at the end
# The 4.x nodes run from Debian chroots that scripts/rabbitmq-node.sh builds
# once into /var/cache/queuey (outside the clone, about a minute each) and
# starts in seconds after that.
#
# NAME.env holds RABBITMQ_ENDPOINT, RABBITMQ_USERNAME, RABBITMQ_PASSWORD,
# RABBITMQ_AMQP_URL (what the tests read), BROKER_NAME, BROKER_VERSION (what
# the broker reports in /api/overview), BROKER_LOG (its log file, when known)
# and BROKER_LOG_OFFSET (the log's size when this run began with it), plus any
# other assignments the broker's start command printed.
#
# Stopping: a node that already ran before `start` is left running; one that
# `start` started is recorded in build/brokers/started and stopped by its pid
# (scripts/rabbitmq-node.sh stop) by `stop`. scripts/testacc.sh calls `stop`
# when it ends, however it ends.
#
# To add a broker, add one line to BROKERS: its name, then either
#   node NODE VERSION AMQP MGMT DIST [rabbitmq.conf line]…
# for a node of scripts/rabbitmq-node.sh, or
#   cmd 'START COMMAND' 'STOP COMMAND'
# for anything else: START prints shell assignments and exits 0 once the
# broker answers. They all go into the tests' environment; the broker's
# version is read from RABBITMQ_ENDPOINT, NODE_ENDPOINT or the first other
# *_ENDPOINT. E.g. for the OAuth 2.0 node of the auth tests:
#   "oauth-4.3  cmd 'scripts/oauth-node.sh start 4.3' 'scripts/oauth-node.sh stop 4.3'"
# with, in scripts/testacc.sh's STAGES,
#   "oauth-4.3  terraform oauth-4.3 ^(TestAccOAuth2_|TestAccBearerToken_) -"
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/build/brokers"
node_sh="$root/scripts/rabbitmq-node.sh"

# RabbitMQ 4.x permits transient non-exclusive queues, deprecated, with a
# warning; the test nodes deny them, so that a test or the provider declaring
# one fails. (Global QoS, also deprecated, is denied by default on 4.3.)
deny="deprecated_features.permit.transient_nonexcl_queues = false"
BROKERS=(
	"3.10        system"
	"4.0         node rabbit40 4.0 5674 15674 25674 '$deny'"
	"4.3         node rabbit43 4.3 5673 15673 25673 '$deny'"
	"4.3-quorum  node queuey-quorum43 4.3 5684 15684 25684 '$deny' 'default_queue_type = quorum'"
	"oauth-3.10  cmd '$root/scripts/oauth-node.sh start 3.10' '$root/scripts/oauth-node.sh stop 3.10'"
	"oauth-4.3   cmd '$root/scripts/oauth-node.sh start 4.3' '$root/scripts/oauth-node.sh stop 4.3'"
	"resil       cmd '$root/scripts/resil-nodes.sh start' '$root/scripts/resil-nodes.sh stop'"
)

log() { printf 'brokers: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}

# definition NAME: the words after NAME in its BROKERS line.
definition() {
	local line words
	for line in "${BROKERS[@]}"; do
		eval "words=($line)"
		if [[ "${words[0]}" == "$1" ]]; then
			printf '%s\n' "${words[@]:1}"
			return 0
		fi
	done
	return 1
}

# reported_version ENDPOINT USER PASSWORD: rabbitmq_version of /api/overview.
reported_version() {
	curl -s -m 10 -u "$2:$3" "$1/api/overview?columns=rabbitmq_version" 2>/dev/null |
		sed -n 's/.*"rabbitmq_version":"\([^"]*\)".*/\1/p'
}

# record NAME: writes build/brokers/NAME.env from the assignments in the
# environment of the caller (RABBITMQ_* or NODE_*), then prints it.
# amqp_endpoint is an AMQP URL without its credentials and trailing slash.
amqp_endpoint() { sed -E 's#^(amqps?://)[^@/]*@#\1#; s#/$##' <<<"$1"; }

write_env() {
	local name="$1" out="$dir/$1.env" endpoint amqp user password version log offset=0
	endpoint="${RABBITMQ_ENDPOINT:-${NODE_ENDPOINT:-}}"
	amqp="${RABBITMQ_AMQP_URL:-${NODE_AMQP_URL:-}}"
	# A start command that names its endpoint otherwise (e.g.
	# RABBITMQ_OAUTH_ENDPOINT): its version is read there, and the tests get
	# its assignments as they are, with no RABBITMQ_ENDPOINT of this script.
	local probe="$endpoint"
	if [[ -z "$probe" ]]; then
		probe="$(sed -n 's/^[A-Za-z0-9_]*_ENDPOINT=//p' <<<"${EXTRA_ASSIGNMENTS:-}" | head -n 1)"
		probe="$(eval "echo $probe")"
	fi
	user="${RABBITMQ_USERNAME:-guest}"
	password="${RABBITMQ_PASSWORD:-guest}"
	log="${BROKER_LOG:-${NODE_LOG:-}}"
	[[ -n "$probe" ]] || die "$name: its start command printed no RABBITMQ_ENDPOINT, NODE_ENDPOINT or other *_ENDPOINT"
	version="$(reported_version "$probe" "$user" "$password")"
	[[ -n "$version" ]] || version="${NODE_VERSION:-unknown}"
	if [[ -n "$log" && -f "$log" ]]; then offset="$(stat -c %s "$log")"; fi
	{
		echo "# Written by scripts/brokers.sh start $name; load with: set -a; . $out; set +a"
		if [[ -n "$endpoint" ]]; then
			printf 'RABBITMQ_ENDPOINT=%q\n' "$endpoint"
			printf 'RABBITMQ_USERNAME=%q\n' "$user"
			printf 'RABBITMQ_PASSWORD=%q\n' "$password"
			printf 'RABBITMQ_AMQP_URL=%q\n' "$amqp"
			# The provider's amqp_endpoint (the dead-letter actions): the same
			# broker's AMQP port, without the credentials.
			if [[ -n "$amqp" ]]; then printf 'RABBITMQ_AMQP_ENDPOINT=%q\n' "$(amqp_endpoint "$amqp")"; fi
		fi
		printf 'BROKER_NAME=%q\n' "$name"
		printf 'BROKER_VERSION=%q\n' "$version"
		printf 'BROKER_LOG=%q\n' "$log"
		printf 'BROKER_LOG_OFFSET=%q\n' "$offset"
		if [[ -n "${EXTRA_ASSIGNMENTS:-}" ]]; then printf '%s\n' "$EXTRA_ASSIGNMENTS"; fi
	} >"$out"
	log "$name: RabbitMQ $version at $probe (settings in ${out#"$root"/})"
}

# assignments TEXT: the NAME=value lines of TEXT.
assignments() { grep -E '^[A-Za-z_][A-Za-z0-9_]*=' <<<"$1" || true; }

# settings_hold VERSION NODE CONF: whether the running NODE's rabbitmq.conf
# has every line of CONF.
settings_hold() {
	local root="" line
	[[ "$1" == 3.10 ]] || root="${QUEUEY_CACHE:-/var/cache/queuey}/chroot-$(case "$1" in 4.0) echo trixie ;; *) echo forky ;; esac)"
	local have="$root/var/lib/rabbitmq/queuey-nodes/$2/rabbitmq.conf"
	[[ -r "$have" ]] || return 1
	while IFS= read -r line; do
		[[ -z "$line" ]] || grep -qxF -- "$line" "$have" || return 1
	done <"$3"
}

start_one() {
	local name="$1" def kind
	mapfile -t def < <(definition "$name") || true
	((${#def[@]})) || die "unknown broker '$name': known are $(cmd_list | tr '\n' ' ')"
	kind="${def[0]}"
	case "$kind" in
	system)
		(
			# Quiet: this script names the env file it writes (not the .tmp).
			BROKER_READY_QUIET=1 BROKER_ENV_FILE="$dir/$name.env.tmp" "$root/scripts/broker-ready.sh" >/dev/null
			set -a
			# shellcheck disable=SC1090
			. "$dir/$name.env.tmp"
			set +a
			rm -f "$dir/$name.env.tmp"
			write_env "$name"
		)
		;;
	node)
		local node="${def[1]}" version="${def[2]}" amqp="${def[3]}" mgmt="${def[4]}" distp="${def[5]}"
		local conf="$dir/$name.rabbitmq.conf" args=() was_running=0 out
		printf '%s\n' "${def[@]:6}" >"$conf"
		args=(--version "$version" --amqp-port "$amqp" --mgmt-port "$mgmt" --dist-port "$distp")
		[[ -s "$conf" && "$(cat "$conf")" != "" ]] && args+=(--conf "$conf")
		if "$node_sh" env "$node" >/dev/null 2>&1 && curl -s -o /dev/null -m 5 "http://127.0.0.1:$mgmt/api/overview"; then
			if settings_hold "$version" "$node" "$conf"; then
				was_running=1
			else
				# Running with other settings: start it again, afresh, so
				# that they hold from its first boot on.
				log "$name: node $node runs with other settings: restarting it afresh"
				"$node_sh" stop "$node" >&2
				args+=(--fresh)
			fi
		elif ! settings_hold "$version" "$node" "$conf"; then
			args+=(--fresh) # its data dates from other settings
		fi
		out="$("$node_sh" start "$node" "${args[@]}")"
		((was_running)) || echo "node $node" >>"$dir/started"
		(
			eval "$(assignments "$out")"
			write_env "$name"
		)
		;;
	cmd)
		local out
		out="$(bash -c "${def[1]}")" || die "$name: '${def[1]}' failed"
		echo "cmd ${def[2]}" >>"$dir/started"
		(
			EXTRA_ASSIGNMENTS="$(assignments "$out")"
			eval "$EXTRA_ASSIGNMENTS"
			write_env "$name"
		)
		;;
	*) die "broker $name: unknown kind '$kind' in BROKERS" ;;
	esac
}

cmd_start() {
	mkdir -p "$dir"
	local name
	for name in "$@"; do start_one "$name"; done
}

cmd_stop() {
	[[ -f "$dir/started" ]] || return 0
	local kind rest
	while read -r kind rest; do
		case "$kind" in
		node) "$node_sh" stop "$rest" || log "could not stop node $rest" ;;
		cmd) bash -c "$rest" || log "'$rest' failed" ;;
		esac
	done < <(sort -u "$dir/started")
	rm -f "$dir/started"
}

cmd_list() {
	local line words
	for line in "${BROKERS[@]}"; do
		eval "words=($line)"
		echo "${words[0]}"
	done
}

case "${1:-}" in
start)
	shift
	cmd_start "$@"
	;;
stop) cmd_stop ;;
list) cmd_list ;;
*)
	sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
