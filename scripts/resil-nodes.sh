#!/usr/bin/env bash
# Brokers for the restart and cluster acceptance tests (`make testresil`).
#
#   scripts/resil-nodes.sh start   start the nodes below and join c1-c3 into one cluster
#   scripts/resil-nodes.sh stop    stop every node this script starts
#   scripts/resil-nodes.sh test    start, run the tests, stop (what make testresil runs)
#
# Nodes (scripts/rabbitmq-node.sh, ports of the resil plan):
#   restart310  RabbitMQ 3.10 (the machine's)  AMQP 5677, management 15677, distribution 25677
#   restart43   RabbitMQ 4.3 (forky chroot)    AMQP 5678, management 15678, distribution 25678
#   c1, c2, c3  a 3-node RabbitMQ 4.3 cluster  AMQP 5681-5683, management 15681-15683,
#                                              distribution 25681-25683
# The cluster's nodes share the chroot's Erlang cookie; c2 and c3 join c1 with
# rabbitmqctl stop_app, join_cluster c1@localhost, start_app.
#
# The tests (TestAccRestart_*, TestAccCluster_*) skip unless QUEUEY_RESTART_NODES
# and QUEUEY_CLUSTER_NODES name the nodes; `test` sets them and fails when any
# test skipped or failed. They stop and start the nodes' RabbitMQ application
# (rabbitmqctl stop_app / start_app), never the machine's own broker. About
# 5 minutes on 2 cores. Variables: RESIL_RUN (go test -run pattern, default
# 'TestAccRestart_|TestAccCluster_'), RESIL_TIMEOUT (default 30m),
# RESIL_SUMMARY_FILE (the one-line summary is also written there).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
node="$root/scripts/rabbitmq-node.sh"
build_dir="$root/build"
mkdir -p "$build_dir"

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
}

cmd_stop() {
	local name
	for name in c3 c2 c1 restart43 restart310; do
		"$node" stop "$name" || true
	done
}

cmd_test() {
	local start=$SECONDS result=PASS logf="$build_dir/resil.log" line
	trap cmd_stop EXIT
	if ! cmd_start; then
		line="resilience FAIL (nodes did not start)"
	else
		set -a
		# shellcheck disable=SC1091
		. "$build_dir/broker.env" 2>/dev/null || true
		set +a
		: >"$build_dir/acc.terraformrc"
		log "TF_ACC=1 go test ./internal/provider/ -run '${RESIL_RUN:-TestAccRestart_|TestAccCluster_}' -v"
		if ! TF_ACC=1 QUEUEY_RESTART_NODES=restart310,restart43 QUEUEY_CLUSTER_NODES=c1,c2,c3 \
			TF_CLI_CONFIG_FILE="$build_dir/acc.terraformrc" CHECKPOINT_DISABLE=1 \
			go test ./internal/provider/ -count=1 -timeout "${RESIL_TIMEOUT:-30m}" \
			-run "${RESIL_RUN:-TestAccRestart_|TestAccCluster_}" -parallel 1 -v 2>&1 | tee "$logf"; then
			result=FAIL
		fi
		local passed skipped failed
		passed=$(grep -c -- '^--- PASS: ' "$logf")
		skipped=$(grep -c -- '^--- SKIP: ' "$logf")
		failed=$(grep -c -- '^--- FAIL: ' "$logf")
		if ((skipped > 0 || passed == 0)); then result=FAIL; fi
		line="resilience $result ($passed passed, $failed failed, $skipped skipped in $((SECONDS - start))s; log in build/resil.log)"
	fi
	[[ -n "${RESIL_SUMMARY_FILE:-}" ]] && printf '%s\n' "$line" >"$RESIL_SUMMARY_FILE"
	echo "==> $line"
	[[ "$line" == "resilience PASS"* ]]
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
test) cmd_test ;;
*) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
