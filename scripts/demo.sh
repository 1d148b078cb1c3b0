#!/usr/bin/env bash
# `make demo`: applies examples/quickstart with the provider built into build/,
# against a broker made ready by scripts/brokers.sh (BROKER), and prints the outputs.
# `make demo-destroy` (scripts/demo.sh destroy): destroys what the demo
# declared, with the demo's own CLI configuration and broker settings.
# `scripts/demo.sh leftovers` (make clean): lists the queues the demo's state
# still manages on the broker, if any; contacts nothing.
#
# Terraform finds the fresh build through a dev_overrides CLI configuration
# written to build/terraformrc and passed in TF_CLI_CONFIG_FILE; ~/.terraformrc
# is never read or written. The quickstart's source "queuey/queuey" means
# registry.terraform.io/queuey/queuey to Terraform and
# registry.opentofu.org/queuey/queuey to OpenTofu, so the override names both.
# The example is copied to build/quickstart and applied there, so its state
# stays out of the source tree; a second run finds nothing to change.
#
# BROKER picks the broker (scripts/brokers.sh: 3.10, the default, is the
# machine's own; 4.0 and 4.3 are nodes started for the demo and stopped after
# it unless KEEP_BROKERS=1).
# TF names the Terraform binary (default: terraform), e.g. TF=tofu (make demo
# TF=tofu builds OpenTofu into the CLI cache first when tofu is not on PATH;
# scripts/tofu.sh).
# The provider is built first unless SKIP_BUILD=1 (make demo builds it).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

mode="${1:-apply}"
tf="${TF:-terraform}"
build_dir="$repo_root/build"
work_dir="$build_dir/quickstart"

log() { printf 'demo: %s\n' "$*" >&2; }

# managed prints each queue the demo's state manages, as "orders (vhost /)".
managed() {
	[[ -s "$work_dir/terraform.tfstate" ]] || return 0
	# The state's queuey_queue IDs, "%2F/orders": escaped vhost, slash,
	# escaped name; unescaped for reading.
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
*)
	log "unknown mode '$mode': apply (default), destroy or leftovers"
	exit 2
	;;
esac
if [[ "$mode" == destroy && -z "$(managed)" ]]; then
	log "build/quickstart holds no state of the demo: nothing to destroy"
	exit 0
fi

if [[ "$tf" == tofu ]] && ! command -v tofu >/dev/null; then
	log "tofu not on PATH: scripts/tofu.sh provides OpenTofu (cached in ${QUEUEY_CACHE:-/var/cache/queuey}/cli)"
	tf="$("$repo_root/scripts/tofu.sh" | tail -n 1)"
fi
if ! command -v "$tf" >/dev/null; then
	log "'$tf' not found on PATH: install Terraform >= 1.8 (or OpenTofu), or set TF to the binary's path"
	exit 1
fi

if [[ "${SKIP_BUILD:-}" != 1 ]]; then
	log "building the provider into build/"
	mkdir -p "$build_dir"
	go build -trimpath -ldflags "-X main.version=${VERSION:-dev}" -o "$build_dir/terraform-provider-queuey" .
fi
[[ -x "$build_dir/terraform-provider-queuey" ]] || {
	log "build/terraform-provider-queuey is missing: run make build"
	exit 1
}

broker="${BROKER:-3.10}"
log "making broker $broker ready (scripts/brokers.sh)"
"$repo_root/scripts/brokers.sh" start "$broker"
if [[ "${KEEP_BROKERS:-}" != 1 ]]; then
	# A node this demo started stops with it; KEEP_BROKERS=1 keeps it.
	trap '"$repo_root/scripts/brokers.sh" stop' EXIT
fi
set -a
# shellcheck disable=SC1090
. "$build_dir/brokers/$broker.env"
set +a

# The CLI configuration: the provider comes from build/, every other one the
# usual way (the quickstart needs no other).
cat >"$build_dir/terraformrc" <<EOF
# Written by scripts/demo.sh. Use it with: export TF_CLI_CONFIG_FILE=$build_dir/terraformrc
provider_installation {
  dev_overrides {
    "registry.terraform.io/queuey/queuey" = "$build_dir"
    "registry.opentofu.org/queuey/queuey" = "$build_dir"
  }
  direct {}
}
EOF
export TF_CLI_CONFIG_FILE="$build_dir/terraformrc"
export TF_IN_AUTOMATION=1
export CHECKPOINT_DISABLE=1

color=()
if [[ ! -t 1 ]]; then color=(-no-color); fi

if [[ "$mode" == destroy ]]; then
	# The configuration the demo applied, still in build/quickstart.
	log "$tf destroy of build/quickstart against $RABBITMQ_ENDPOINT"
	"$tf" -chdir="$work_dir" destroy -auto-approve -input=false "${color[@]}"
	exit 0
fi

mkdir -p "$work_dir"
rm -f "$work_dir"/*.tf
cp examples/quickstart/*.tf "$work_dir/"

log "$tf apply of examples/quickstart (in build/quickstart) against $RABBITMQ_ENDPOINT"
# apply prints the outputs at its end (terraform output prints them again).
"$tf" -chdir="$work_dir" apply -auto-approve -input=false "${color[@]}"
log "done; make demo-destroy deletes the demo's queues again"
