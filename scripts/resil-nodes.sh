#!/usr/bin/env bash
# The nodes of the restart and cluster acceptance tests (TestAccRestart_*,
# TestAccCluster_*): the "resil" broker of scripts/brokers.sh, which the resil
# stage of scripts/testacc.sh uses (`make test`, `make testresil`).
#
#   scripts/resil-nodes.sh start   start the nodes below, join c1-c3 into one cluster,
#                                  print the tests' shell assignments
#   scripts/resil-nodes.sh stop    stop every node below
#
# Nodes (scripts/rabbitmq-node.sh, ports of the project's plan):
#   restart310  RabbitMQ 3.10 (the machine's)  AMQP 5677, management 15677, distribution 25677
#   restart43   RabbitMQ 4.3 (forky chroot)    AMQP 5678, management 15678, distribution 25678
#   c1, c2, c3  a 3-node RabbitMQ 4.3 cluster  AMQP 5681-5683, management 15681-15683,
#                                              distribution 25681-25683
# The cluster's nodes share the chroot's Erlang cookie; c2 and c3 join c1 with
# rabbitmqctl stop_app, join_cluster c1@localhost, start_app. start prints
# RABBITMQ_ENDPOINT and RABBITMQ_AMQP_URL (c1's), QUEUEY_RESTART_NODES and
# QUEUEY_CLUSTER_NODES: the tests skip unless the last two name the nodes, and
# they stop and start the nodes' RabbitMQ application (rabbitmqctl stop_app,
# start_app), never the machine's own broker. Starting takes about 2 minutes
# on 2 cores; nodes already running (and clustered) are kept.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
node="$root/scripts/rabbitmq-node.sh"

log() { printf '==> resil: %s\n' "$*" >&2; }

start_node() {
	local name="$1" version="$2" n="$3"
	"$node" start "$name" --version "$version" --amqp-port "56$n" --mgmt-port "156$n" --dist-port "256$n" --fresh >/dev/null
}

# clustered NAME: whether NAME's cluster already counts c1 among its running nodes.
clustered() {
	"$node" ctl "$1" -q cluster_status --formatter json 2>/dev/null | grep -q '"c1@localhost"'
}

cmd_start() {
	local n
	start_node restart310 3.10 77 || return 1
	start_node restart43 4.3 78 || return 1
	for n in 1 2 3; do
		if "$node" env "c$n" >/dev/null 2>&1 && clustered "c$n"; then continue; fi
		start_node "c$n" 4.3 "8$n" || return 1
	done
	for n in 2 3; do
		clustered "c$n" && continue
		log "joining c$n to c1"
		"$node" ctl "c$n" stop_app >/dev/null &&
			"$node" ctl "c$n" join_cluster c1@localhost >/dev/null &&
			"$node" ctl "c$n" start_app >/dev/null || return 1
	done
	"$node" ctl c1 -q await_online_nodes 3 --timeout 120 >/dev/null 2>&1 || "$node" ctl c1 cluster_status >&2
	log "cluster: $("$node" ctl c1 -q cluster_status --formatter json | tr -d '\n' | grep -o '"running_nodes":\[[^]]*\]')"
	echo "RABBITMQ_ENDPOINT=http://127.0.0.1:15681"
	echo "RABBITMQ_AMQP_URL=amqp://guest:guest@127.0.0.1:5681/"
	echo "QUEUEY_RESTART_NODES=restart310,restart43"
	echo "QUEUEY_CLUSTER_NODES=c1,c2,c3"
}

cmd_stop() {
	local name
	for name in c3 c2 c1 restart43 restart310; do
		"$node" stop "$name" || true
	done
}

case "${1:-}" in
start)
	# A start that fails leaves nothing running (brokers.sh records the
	# stop only after a start that succeeded).
	cmd_start || {
		cmd_stop
		exit 1
	}
	;;
stop) cmd_stop ;;
*) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
