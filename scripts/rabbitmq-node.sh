#!/usr/bin/env bash
# Starts, stops and drives extra RabbitMQ nodes for the tests, beside the
# machine's own broker (which this script never stops or reconfigures).
#
#   scripts/rabbitmq-node.sh start NAME --version V --amqp-port N --mgmt-port N --dist-port N
#                                  [--conf FILE] [--advanced FILE] [--plugins a,b] [--fresh]
#   scripts/rabbitmq-node.sh stop NAME        stop a node this script started, by its pid
#   scripts/rabbitmq-node.sh ctl NAME ARGS…   rabbitmqctl ARGS against the node
#   scripts/rabbitmq-node.sh env NAME         print the node's shell assignments again
#   scripts/rabbitmq-node.sh rootfs V         make the files of version V ready, start nothing
#
# Versions:
#   3.10  the machine's own Debian rabbitmq-server (installed when missing);
#   4.0   Debian trixie's rabbitmq-server, in a debootstrap chroot;
#   4.3   Debian forky's (testing) rabbitmq-server, in a debootstrap chroot.
# The chroots are built once into $QUEUEY_CACHE (default /var/cache/queuey),
# outside any clone, so later runs start a node in seconds.
#
# A node is NAME@localhost, listens on 127.0.0.1 only, lets guest/guest in
# from loopback, and keeps its data, config and log in
# <root>/var/lib/rabbitmq/queuey-nodes/NAME (<root> is / for 3.10, the chroot
# otherwise); --fresh wipes them first. --conf appends lines to its
# rabbitmq.conf, --advanced is copied as its advanced.config, --plugins lists
# the enabled plugins (default rabbitmq_management).
#
# start waits (NODE_WAIT_SECONDS, default 120) until the management port
# answers HTTP, then prints shell assignments on stdout:
#   NODE_NAME, NODE_VERSION (what the node reports), NODE_SERIES, NODE_ENDPOINT,
#   NODE_AMQP_URL, NODE_PID, NODE_LOG (the node's log file, as seen from here)
# and keeps them in $QUEUEY_CACHE/nodes/NAME.env for `env` and `stop`.
# Starting a node that already runs prints its assignments and changes nothing.
set -euo pipefail

cache="${QUEUEY_CACHE:-/var/cache/queuey}"
state_dir="$cache/nodes"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
wait_seconds="${NODE_WAIT_SECONDS:-120}"

log() { printf 'rabbitmq-node: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}

as_root() {
	if [[ $EUID -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

suite_of() {
	case "$1" in
	3.10) echo "" ;;
	4.0) echo trixie ;;
	4.3) echo forky ;;
	*) die "unknown version $1: use 3.10, 4.0 or 4.3" ;;
	esac
}

# root_of V: the root directory of version V's files ("" for the machine's own).
root_of() {
	local suite
	suite="$(suite_of "$1")"
	if [[ -z "$suite" ]]; then echo ""; else echo "$cache/chroot-$suite"; fi
}

# ensure_rootfs V: makes version V's rabbitmq-server available.
ensure_rootfs() {
	local v="$1" suite root
	suite="$(suite_of "$v")"
	if [[ -z "$suite" ]]; then
		if [[ ! -x /usr/lib/rabbitmq/bin/rabbitmq-server ]]; then
			log "installing Debian's rabbitmq-server"
			as_root apt-get update -qq
			as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rabbitmq-server >/dev/null
		fi
		command -v setpriv >/dev/null || die "setpriv (util-linux) is missing"
		return 0
	fi
	root="$cache/chroot-$suite"
	if [[ ! -f "$root/.queuey-ready" ]]; then
		if ! command -v debootstrap >/dev/null; then
			log "installing debootstrap"
			as_root apt-get update -qq
			as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
		fi
		# Bookworm's debootstrap has no script for forky; sid's fits every
		# current suite.
		local script=/usr/share/debootstrap/scripts/sid
		log "building the $suite chroot for RabbitMQ $v in $root (about 1-3 minutes, once)"
		as_root mkdir -p "$cache"
		as_root rm -rf "$root.tmp"
		if ! as_root debootstrap --variant=minbase --include=rabbitmq-server "$suite" "$root.tmp" "$mirror" "$script" \
			>"$cache/debootstrap-$suite.log" 2>&1; then
			tail -n 20 "$cache/debootstrap-$suite.log" >&2
			die "debootstrap of $suite failed; full log in $cache/debootstrap-$suite.log"
		fi
		as_root rm -rf "$root"
		as_root mv "$root.tmp" "$root"
		as_root touch "$root/.queuey-ready"
	fi
	if ! mountpoint -q "$root/proc"; then
		as_root mount -t proc proc "$root/proc"
	fi
	as_root cp /etc/hosts "$root/etc/hosts"
}

# in_root V CMD…: runs CMD as the rabbitmq user of version V's files.
in_root() {
	local v="$1" root
	shift
	root="$(root_of "$v")"
	local run=(setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/var/lib/rabbitmq LANG=C.UTF-8 LC_ALL=C.UTF-8
		ERL_EPMD_ADDRESS=127.0.0.1)
	if [[ -n "$root" ]]; then
		as_root chroot "$root" "${run[@]}" "$@"
	else
		as_root "${run[@]}" "$@"
	fi
}

# node_env NAME: loads the saved assignments of NAME.
node_env() {
	local f="$state_dir/$1.env"
	[[ -f "$f" ]] || die "no node $1 was started by this script ($f missing)"
	# shellcheck disable=SC1090
	. "$f"
}

alive() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }

http_answers() {
	local code
	code="$(curl -s -o /dev/null -w '%{http_code}' --connect-timeout 2 -m 5 "http://127.0.0.1:$1/api/overview" 2>/dev/null || true)"
	[[ "$code" != 000 && -n "$code" ]]
}

cmd_rootfs() { ensure_rootfs "$1"; }

cmd_start() {
	local name="$1"
	shift
	local version="" amqp="" mgmt="" dist="" conf="" advanced="" plugins="rabbitmq_management" fresh=0
	while (($#)); do
		case "$1" in
		--version) version="$2"; shift 2 ;;
		--amqp-port) amqp="$2"; shift 2 ;;
		--mgmt-port) mgmt="$2"; shift 2 ;;
		--dist-port) dist="$2"; shift 2 ;;
		--conf) conf="$2"; shift 2 ;;
		--advanced) advanced="$2"; shift 2 ;;
		--plugins) plugins="$2"; shift 2 ;;
		--fresh) fresh=1; shift ;;
		*) die "start: unknown option $1" ;;
		esac
	done
	[[ "$name" =~ ^[a-z][a-z0-9_-]*$ ]] || die "node name must be lower-case letters, digits, - or _: $name"
	[[ "$name" != rabbit ]] || die "rabbit@localhost is the machine's own node: never started or stopped here"
	[[ -n "$version" && -n "$amqp" && -n "$mgmt" && -n "$dist" ]] ||
		die "start $name needs --version, --amqp-port, --mgmt-port and --dist-port"

	if [[ -f "$state_dir/$name.env" ]]; then
		(
			node_env "$name"
			alive "$NODE_PID" && http_answers "$mgmt"
		) && {
			log "$name@localhost already runs"
			grep -q '^NODE_LOG=' "$state_dir/$name.env" ||
				printf 'NODE_LOG=%q\n' "$(root_of "$version")/var/lib/rabbitmq/queuey-nodes/$name/log/$name@localhost.log" >>"$state_dir/$name.env"
			cat "$state_dir/$name.env"
			return 0
		}
	fi

	ensure_rootfs "$version"
	local root dir
	root="$(root_of "$version")"
	dir="/var/lib/rabbitmq/queuey-nodes/$name" # as the node sees it
	if ((fresh)); then as_root rm -rf "$root$dir"; fi
	as_root mkdir -p "$root$dir/data" "$root$dir/log" "$cache"

	{
		echo "listeners.tcp.1 = 127.0.0.1:$amqp"
		echo "management.tcp.ip = 127.0.0.1"
		echo "management.tcp.port = $mgmt"
		echo "loopback_users = none"
		if [[ -n "$conf" ]]; then cat "$conf"; fi
	} | as_root tee "$root$dir/rabbitmq.conf" >/dev/null
	if [[ -n "$advanced" ]]; then
		as_root cp "$advanced" "$root$dir/advanced.config"
	else
		echo "[]." | as_root tee "$root$dir/advanced.config" >/dev/null
	fi
	echo "[${plugins//,/,}]." | as_root tee "$root$dir/enabled_plugins" >/dev/null
	: | as_root tee "$root$dir/rabbitmq-env.conf" >/dev/null
	as_root chown -R "$(stat -c %u:%g "$root/var/lib/rabbitmq")" "$root$dir"
	as_root rm -f "$root$dir/pid"

	log "starting $name@localhost (RabbitMQ $version) on AMQP $amqp, management $mgmt, distribution $dist"
	local root_cmd=()
	[[ -n "$root" ]] && root_cmd=(chroot "$root")
	as_root setsid --wait "${root_cmd[@]}" setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/var/lib/rabbitmq LANG=C.UTF-8 LC_ALL=C.UTF-8 \
		ERL_EPMD_ADDRESS=127.0.0.1 \
		RABBITMQ_NODENAME="$name@localhost" \
		RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
		RABBITMQ_NODE_PORT="$amqp" \
		RABBITMQ_DIST_PORT="$dist" \
		RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf" \
		RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf" \
		RABBITMQ_ADVANCED_CONFIG_FILE="$dir/advanced.config" \
		RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" \
		RABBITMQ_MNESIA_BASE="$dir/data" \
		RABBITMQ_LOG_BASE="$dir/log" \
		RABBITMQ_PID_FILE="$dir/pid" \
		/usr/lib/rabbitmq/bin/rabbitmq-server >"$cache/nodes-$name.out" 2>&1 </dev/null &

	local deadline=$((SECONDS + wait_seconds)) pid=""
	while :; do
		[[ -z "$pid" && -s "$root$dir/pid" ]] && pid="$(cat "$root$dir/pid")"
		if [[ -n "$pid" ]] && http_answers "$mgmt"; then break; fi
		if ((SECONDS >= deadline)); then
			tail -n 30 "$cache/nodes-$name.out" >&2 || true
			[[ -n "$pid" ]] && kill "$pid" 2>/dev/null
			die "$name@localhost did not answer on management port $mgmt within ${wait_seconds}s; its output is in $cache/nodes-$name.out and its logs in $root$dir/log"
		fi
		sleep 1
	done

	local reported
	reported="$(in_root "$version" /usr/sbin/rabbitmqctl -n "$name@localhost" -q eval 'rabbit_misc:version().' 2>/dev/null | tr -d '"' || true)"
	[[ -n "$reported" ]] || reported="$version"
	mkdir -p "$state_dir"
	{
		printf 'NODE_NAME=%q\n' "$name@localhost"
		printf 'NODE_VERSION=%q\n' "$reported"
		printf 'NODE_SERIES=%q\n' "$version"
		printf 'NODE_ENDPOINT=%q\n' "http://127.0.0.1:$mgmt"
		printf 'NODE_AMQP_URL=%q\n' "amqp://guest:guest@127.0.0.1:$amqp/"
		printf 'NODE_PID=%q\n' "$pid"
		printf 'NODE_LOG=%q\n' "$root$dir/log/$name@localhost.log"
	} >"$state_dir/$name.env"
	log "$name@localhost is up (RabbitMQ $reported, pid $pid)"
	cat "$state_dir/$name.env"
}

cmd_stop() {
	local name="$1"
	[[ "$name" != rabbit ]] || die "rabbit@localhost is the machine's own node: never stopped here"
	if [[ ! -f "$state_dir/$name.env" ]]; then
		log "$name: not started by this script, nothing to stop"
		return 0
	fi
	node_env "$name"
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
	rm -f "$state_dir/$name.env"
}

cmd_ctl() {
	local name="$1"
	shift
	node_env "$name"
	in_root "$NODE_SERIES" /usr/sbin/rabbitmqctl -n "$NODE_NAME" "$@"
}

cmd_env() {
	node_env "$1"
	cat "$state_dir/$1.env"
}

usage() { sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

(($# >= 2)) || usage
cmd="$1"
shift
case "$cmd" in
start) cmd_start "$@" ;;
stop) cmd_stop "$1" ;;
ctl) cmd_ctl "$@" ;;
env) cmd_env "$1" ;;
rootfs) cmd_rootfs "$1" ;;
*) usage ;;
esac
