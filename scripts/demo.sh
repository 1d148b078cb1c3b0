#!/usr/bin/env bash
# scripts/demo.sh [apply|destroy|leftovers]: make demo applies
# examples/quickstart (copied to build/quickstart, so its state stays out of
# the tree) with the provider of build/ through a dev_overrides CLI
# configuration (build/terraformrc; ~/.terraformrc is never read), against
# broker BROKER (3.10, the machine's, by default; a node started for the demo
# stops after it unless KEEP_BROKERS=1). destroy destroys what it declared;
# leftovers (make clean) names the queues its state still manages. TF is the
# CLI (TF=tofu builds OpenTofu OPENTOFU_VERSION when tofu is not on PATH).
set -euo pipefail
me=demo
# shellcheck source=scripts/lib/queuey.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/queuey.sh"
cd "$root"
mode="${1:-apply}" tf="${TF:-terraform}" work_dir="$root/build/quickstart"

# managed prints each queue the demo's state manages, as "orders (vhost /),"
# from the state's IDs ("%2F/orders").
managed() {
	[[ -s "$work_dir/terraform.tfstate" ]] || return 0
	grep -o '"id": "[^"]*/[^"]*"' "$work_dir/terraform.tfstate" |
		sed -E 's#"id": "([^/]*)/(.*)"#\2 (vhost \1),#; s/%2F/\//g; s/%20/ /g' || true
}

case "$mode" in
apply | destroy) ;;
leftovers)
	queues="$(managed | tr '\n' ' ' | sed 's/, *$//')"
	if [[ -n "$queues" ]]; then
		log "the demo's state (build/quickstart) still manages queues on the broker: $queues."
		log "They stay there, with their dead-letter and hold queues, after make clean removes the state;"
		log "run make demo-destroy first to delete them."
	fi
	exit 0
	;;
*) die "unknown mode '$mode': apply (default), destroy or leftovers" ;;
esac
if [[ "$mode" == destroy && -z "$(managed)" ]]; then
	log "build/quickstart holds no state of the demo: nothing to destroy"
	exit 0
fi

if [[ "$tf" == tofu ]] && ! command -v tofu >/dev/null; then
	log "tofu not on PATH: scripts/cli.sh provides OpenTofu (cached in $cache/cli)"
	tf="$("$root/scripts/cli.sh" opentofu "${OPENTOFU_VERSION:-v1.12.6}" | tail -n 1)"
fi
command -v "$tf" >/dev/null || die "'$tf' not found on PATH: install Terraform >= 1.8 (or OpenTofu), or set TF to the binary's path"
[[ -x build/terraform-provider-queuey ]] || die "build/terraform-provider-queuey is missing: run make build"

broker="${BROKER:-3.10}"
log "making broker $broker ready (queuey-acc brokers start)"
acc brokers start "$broker"
[[ "${KEEP_BROKERS:-}" == 1 ]] || trap 'acc brokers stop' EXIT
load_env "build/brokers/$broker.env"

cat >build/terraformrc <<TFRC
# Written by scripts/demo.sh. Use it with: export TF_CLI_CONFIG_FILE=$root/build/terraformrc
provider_installation {
  dev_overrides {
    "registry.terraform.io/queuey/queuey" = "$root/build"
    "registry.opentofu.org/queuey/queuey" = "$root/build"
  }
  direct {}
}
TFRC
export TF_CLI_CONFIG_FILE="$root/build/terraformrc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
color=()
[[ -t 1 ]] || color=(-no-color)

if [[ "$mode" == destroy ]]; then
	log "$tf destroy of build/quickstart against $RABBITMQ_ENDPOINT"
	"$tf" -chdir="$work_dir" destroy -auto-approve -input=false "${color[@]}"
	exit 0
fi
mkdir -p "$work_dir"
rm -f "$work_dir"/*.tf
cp examples/quickstart/*.tf "$work_dir/"
log "$tf apply of examples/quickstart (in build/quickstart) against $RABBITMQ_ENDPOINT"
"$tf" -chdir="$work_dir" apply -auto-approve -input=false "${color[@]}"
log "done; make demo-destroy deletes the demo's queues again"
