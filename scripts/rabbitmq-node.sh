#!/usr/bin/env bash
# RabbitMQ nodes for the tests beside the machine's own broker, which this
# script never touches (the nodes and their ports: tools/acc/plan.go). A node
# is NAME@localhost on 127.0.0.1 that lets guest/guest in from loopback; its
# files are in ROOT/var/lib/rabbitmq/queuey-nodes/NAME, ROOT being / for
# 3.10 (Debian's rabbitmq-server) and a debootstrap chroot in $QUEUEY_CACHE,
# built once, for 4.0 (trixie) and 4.3 (forky). start prints the node's shell
# assignments (NODE_NAME, NODE_VERSION, NODE_SERIES, NODE_ENDPOINT,
# NODE_AMQP_URL, NODE_PID, NODE_LOG, and NODE_STARTED=1 when it started it).
set -euo pipefail
me=rabbitmq-node
# shellcheck source=scripts/lib/queuey.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/queuey.sh"
state_dir="$cache/nodes"

usage() {
	cat >&2 <<'USAGE'
usage: scripts/rabbitmq-node.sh start NAME --version 3.10|4.0|4.3 --amqp-port N --mgmt-port N --dist-port N
                                [--conf FILE] [--advanced FILE] [--plugins a,b] [--fresh]
       scripts/rabbitmq-node.sh stop NAME | env NAME | ctl NAME RABBITMQCTL-ARGS… | rootfs VERSION
USAGE
	exit 2
}

root_of() {
	case "$1" in
	3.10) echo "" ;;
	4.0) echo "$cache/chroot-trixie" ;;
	4.3) echo "$cache/chroot-forky" ;;
	*) die "unknown version $1: use 3.10, 4.0 or 4.3" ;;
	esac
}

# ensure_rootfs V: makes version V's rabbitmq-server available.
ensure_rootfs() {
	local fs suite
	fs="$(root_of "$1")"
	if [[ -z "$fs" ]]; then
		[[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]] || apt_install rabbitmq-server
		command -v setpriv >/dev/null || die "setpriv (util-linux) is missing"
		return 0
	fi
	suite="${fs##*-}"
	if [[ ! -f "$fs/.queuey-ready" ]]; then
		command -v debootstrap >/dev/null || apt_install debootstrap
		log "building the $suite chroot for RabbitMQ $1 in $fs (about 1-3 minutes, once)"
		as_root mkdir -p "$cache"
		as_root rm -rf "$fs.tmp"
		# sid's script fits every current suite; bookworm's debootstrap has none for forky.
		if ! as_root debootstrap --variant=minbase --include=rabbitmq-server "$suite" "$fs.tmp" \
			"${DEBIAN_MIRROR:-http://deb.debian.org/debian}" /usr/share/debootstrap/scripts/sid >"$cache/debootstrap-$suite.log" 2>&1; then
			tail -n 20 "$cache/debootstrap-$suite.log" >&2
			die "debootstrap of $suite failed; full log in $cache/debootstrap-$suite.log"
		fi
		as_root rm -rf "$fs"
		as_root mv "$fs.tmp" "$fs"
		as_root touch "$fs/.queuey-ready"
	fi
	mountpoint -q "$fs/proc" || as_root mount -t proc proc "$fs/proc"
	as_root cp /etc/hosts "$fs/etc/hosts"
}

# as_rabbitmq V: the words that run a command as the rabbitmq user among
# version V's files, in a clean environment.
as_rabbitmq() {
	local fs
	fs="$(root_of "$1")"
	[[ -z "$fs" ]] || printf '%s\n' chroot "$fs"
	printf '%s\n' setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/var/lib/rabbitmq LANG=C.UTF-8 LC_ALL=C.UTF-8 ERL_EPMD_ADDRESS=127.0.0.1
}

node_env() {
	[[ -f "$state_dir/$1.env" ]] || die "no node $1 was started by this script ($state_dir/$1.env missing)"
	load_env "$state_dir/$1.env"
}

alive() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }

# running NAME MGMT: whether this script's node NAME runs and answers on MGMT.
running() {
	[[ -f "$state_dir/$1.env" ]] && (node_env "$1" && alive "$NODE_PID") &&
		acc wait -any -seconds 0 "http://127.0.0.1:$2" 2>/dev/null
}

cmd_start() {
	local name="$1" version="" amqp="" mgmt="" dist="" conf="" advanced="" plugins=rabbitmq_management fresh=0
	shift
	while (($#)); do
		case "$1" in
		--fresh) fresh=1 ;;
		--version) version="$2" && shift ;;
		--amqp-port) amqp="$2" && shift ;;
		--mgmt-port) mgmt="$2" && shift ;;
		--dist-port) dist="$2" && shift ;;
		--conf) conf="$2" && shift ;;
		--advanced) advanced="$2" && shift ;;
		--plugins) plugins="$2" && shift ;;
		*) usage ;;
		esac
		shift
	done
	[[ "$name" =~ ^[a-z][a-z0-9_-]*$ && "$name" != rabbit ]] || die "a node's name is lower-case letters, digits, - or _, not rabbit (the machine's): $name"
	[[ -n "$version" && -n "$amqp" && -n "$mgmt" && -n "$dist" ]] || usage
	local fs dir want run pid reported
	fs="$(root_of "$version")"
	dir="/var/lib/rabbitmq/queuey-nodes/$name" # as the node sees it
	want="$(printf '%s\n' "listeners.tcp.1 = 127.0.0.1:$amqp" "management.tcp.ip = 127.0.0.1" \
		"management.tcp.port = $mgmt" "loopback_users = none" && if [[ -n "$conf" ]]; then cat "$conf"; fi)"
	# A node with other settings starts afresh, so that they hold from its first boot.
	if running "$name" "$mgmt"; then
		if [[ "$(cat "$fs$dir/rabbitmq.conf" 2>/dev/null)" == "$want" ]]; then
			log "$name@localhost already runs"
			cat "$state_dir/$name.env"
			return 0
		fi
		log "$name@localhost runs with other settings: restarting it afresh"
		cmd_stop "$name"
		fresh=1
	elif [[ "$(cat "$fs$dir/rabbitmq.conf" 2>/dev/null)" != "$want" ]]; then
		fresh=1
	fi
	ensure_rootfs "$version"
	if ((fresh)); then as_root rm -rf "$fs$dir"; fi
	as_root mkdir -p "$fs$dir/data" "$fs$dir/log" "$state_dir"
	printf '%s\n' "$want" | as_root tee "$fs$dir/rabbitmq.conf" >/dev/null
	if [[ -n "$advanced" ]]; then as_root cp "$advanced" "$fs$dir/advanced.config"; else echo "[]." | as_root tee "$fs$dir/advanced.config" >/dev/null; fi
	echo "[$plugins]." | as_root tee "$fs$dir/enabled_plugins" >/dev/null
	as_root touch "$fs$dir/rabbitmq-env.conf"
	as_root chown -R "$(stat -c %u:%g "$fs/var/lib/rabbitmq")" "$fs$dir"
	as_root rm -f "$fs$dir/pid"

	log "starting $name@localhost (RabbitMQ $version) on AMQP $amqp, management $mgmt, distribution $dist"
	mapfile -t run < <(as_rabbitmq "$version")
	as_root setsid --wait "${run[@]}" RABBITMQ_NODENAME="$name@localhost" RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
		RABBITMQ_NODE_PORT="$amqp" RABBITMQ_DIST_PORT="$dist" RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf" \
		RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf" RABBITMQ_ADVANCED_CONFIG_FILE="$dir/advanced.config" \
		RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" RABBITMQ_MNESIA_BASE="$dir/data" \
		RABBITMQ_LOG_BASE="$dir/log" RABBITMQ_PID_FILE="$dir/pid" \
		/usr/lib/rabbitmq/bin/rabbitmq-server >"$cache/nodes-$name.out" 2>&1 </dev/null &
	local job=$!
	if ! acc wait -any -seconds "${NODE_WAIT_SECONDS:-120}" "http://127.0.0.1:$mgmt" || [[ ! -s "$fs$dir/pid" ]]; then
		tail -n 30 "$cache/nodes-$name.out" >&2 || true
		# The node's session, which setsid made its server the leader of.
		pkill -TERM -s "$(pgrep -P "$job" | head -n 1)" 2>/dev/null || true
		die "$name@localhost did not answer on management port $mgmt; its output is in $cache/nodes-$name.out and its logs in $fs$dir/log"
	fi
	pid="$(cat "$fs$dir/pid")"
	reported="$(as_root "${run[@]}" /usr/sbin/rabbitmqctl -n "$name@localhost" -q eval 'rabbit_misc:version().' 2>/dev/null | tr -d '"' || true)"
	printf '%s\n' "NODE_NAME=$name@localhost" "NODE_VERSION=${reported:-$version}" "NODE_SERIES=$version" \
		"NODE_ENDPOINT=http://127.0.0.1:$mgmt" "NODE_AMQP_URL=amqp://guest:guest@127.0.0.1:$amqp/" \
		"NODE_PID=$pid" "NODE_LOG=$fs$dir/log/$name@localhost.log" >"$state_dir/$name.env"
	log "$name@localhost is up (RabbitMQ ${reported:-$version}, pid $pid)"
	cat "$state_dir/$name.env"
	echo NODE_STARTED=1
}

cmd_stop() {
	if [[ ! -f "$state_dir/$1.env" ]]; then
		log "$1: not started by this script, nothing to stop"
		return 0
	fi
	node_env "$1"
	if alive "$NODE_PID"; then
		log "stopping $NODE_NAME (pid $NODE_PID)"
		kill -TERM "$NODE_PID" 2>/dev/null || true
		local deadline=$((SECONDS + 60))
		while alive "$NODE_PID" && ((SECONDS < deadline)); do sleep 0.5; done
		if alive "$NODE_PID"; then
			log "$NODE_NAME did not stop within 60s: killing it"
			kill -KILL "$NODE_PID" 2>/dev/null || true
		fi
	fi
	rm -f "$state_dir/$1.env"
}

(($# >= 2)) || usage
cmd="$1"
shift
case "$cmd" in
start) cmd_start "$@" ;;
stop) cmd_stop "$1" ;;
ctl)
	node_env "$1"
	mapfile -t run < <(as_rabbitmq "$NODE_SERIES")
	as_root "${run[@]}" /usr/sbin/rabbitmqctl -n "$NODE_NAME" "${@:2}"
	;;
env) node_env "$1" && cat "$state_dir/$1.env" ;;
rootfs) ensure_rootfs "$1" ;;
*) usage ;;
esac
