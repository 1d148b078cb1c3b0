#!/usr/bin/env bash
# Acceptance tests of the provider on the broker matrix, in stages: one stage
# per CLI × broker (the second part of `make test`, and `make testacc`).
#
# A stage is one line of STAGES below:
#   NAME  CLI  BROKER  RUN  SKIP
# CLI is terraform or opentofu, BROKER a name of scripts/brokers.sh ("-" for
# none), RUN and SKIP the go test -run and -skip patterns ("-" for none).
# Adding a stage is adding a line (and, for a new broker, a line to BROKERS
# in scripts/brokers.sh). A stage passes when its tests pass; a test skipped
# counts as not passed, so a stage's tests either run or are left out by SKIP.
#
# The stages run ACC_LANES at a time (default 2) from one test binary, each
# with go test -parallel ACC_PARALLEL (default 4); every broker a stage needs
# is made ready first by scripts/brokers.sh, and every broker this run started
# is stopped when it ends (the machine's own broker never is). After the
# stages, a deprecation check reads the log of each 4.x node the stages used:
# a "Deprecated features" warning written during the run fails it (RabbitMQ
# 4.3 warns once something the next version removes is used: transient
# non-exclusive queues, x-queue-mode, x-queue-version, global QoS, ...).
#
# Each stage prints one line, with the versions the CLI and the broker
# report, e.g.
#   ==> acceptance terraform 1.11.4 × RabbitMQ 4.3.6: 29 passed, 0 failed, 0 skipped (97s)
# and logs to build/acc-NAME.log.
#
# Variables:
#   ACC_STAGES        names of the stages to run (default: all of STAGES)
#   BROKERS / BROKER  run only the stages on these brokers (e.g. BROKER=4.3); a
#                     CLI of TF_ACC_CLIS (default terraform) without a stage on
#                     such a broker gets one, running the whole suite
#   TF_ACC_CLIS       run only the stages of these CLIs (terraform, opentofu)
#   TERRAFORM, TOFU   the CLIs' binaries (default: terraform on PATH; build/bin/tofu,
#                     built by scripts/tofu.sh at OPENTOFU_VERSION when missing)
#   ACC_RUN           replaces RUN of every stage; ACC_TIMEOUT go test -timeout (60m)
#   ACC_LANES, ACC_PARALLEL  stages at once, and tests at once within a stage
#   ACC_SUMMARY_FILE  the summary lines are also written there
#   KEEP_BROKERS=1    leave the brokers this run started running
#   ACC_RESIL=0       leave out the resil stage (restarts and node failures; make testresil)
# Exits non-zero when a stage or the deprecation check fails.
set -uo pipefail

# The tests that need a broker of their own, left out of the plain stages:
# the node-wide quorum refusal, OAuth 2.0 (the oauth-* stages, on nodes
# with the oauth2 backend; scripts/testacc-oauth.sh runs those alone), and
# the restarts and node failures (the resil stage, on nodes it stops and starts).
oauth="^(TestAccOAuth2_|TestAccBearerToken_)"
own="TestAccNodeQuorum|TestAccOAuth2_|TestAccBearerToken_|TestAccRestart_|TestAccCluster_"
STAGES=(
	"terraform-3.10   terraform 3.10       TestAcc           $own"
	"terraform-4.0    terraform 4.0        TestAcc           $own"
	"terraform-4.3    terraform 4.3        TestAcc           $own"
	"opentofu-4.3     opentofu  4.3        TestAcc           $own"
	"opentofu-unit    opentofu  -          .                 TestAcc"
	"node-quorum-4.3  terraform 4.3-quorum TestAccNodeQuorum -"
	"oauth-3.10       terraform oauth-3.10 $oauth            -"
	"oauth-4.3        terraform oauth-4.3  $oauth            -"
	"oauth-4.3-tofu   opentofu  oauth-4.3  $oauth            -"
)
# The restarts and node failures (five nodes of their own, about 6 minutes
# with their start; make testresil runs this stage alone, ACC_RESIL=0 leaves
# it out).
if [[ "${ACC_RESIL:-1}" == 1 ]]; then
	STAGES+=("resil            terraform resil      TestAccRestart_|TestAccCluster_ -")
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
build_dir="$root/build"
mkdir -p "$build_dir"
lanes="${ACC_LANES:-2}"
parallel="${ACC_PARALLEL:-4}"
timeout="${ACC_TIMEOUT:-60m}"
failed=0

# Pick the stages.
clis_wanted="${TF_ACC_CLIS:-}"
clis_wanted="${clis_wanted//tofu/opentofu}"
clis_wanted="${clis_wanted//openopentofu/opentofu}"
want_brokers="${BROKERS:-${BROKER:-}}"
selected=()
has_stage() { printf '%s\n' "${STAGES[@]}" | awk -v c="$1" -v b="$2" '$2 == c && $3 == b {f = 1} END {exit !f}'; }
for line in "${STAGES[@]}"; do
	read -r name cli broker _ <<<"$line"
	if [[ -n "${ACC_STAGES:-}" && " $ACC_STAGES " != *" $name "* ]]; then continue; fi
	if [[ -n "$want_brokers" && " $want_brokers " != *" $broker "* ]]; then continue; fi
	if [[ -n "$clis_wanted" && " $clis_wanted " != *" $cli "* ]]; then continue; fi
	selected+=("$line")
done
# A CLI × broker asked for that STAGES lacks: a stage running the whole suite.
for b in $want_brokers; do
	for cli in ${clis_wanted:-terraform}; do
		if ! has_stage "$cli" "$b" && { [[ -n "$clis_wanted" ]] || ! printf '%s\n' "${STAGES[@]}" | awk -v b="$b" '$3 == b {f = 1} END {exit !f}'; }; then
			selected+=("$cli-$b $cli $b TestAcc $own")
		fi
	done
done
if ((${#selected[@]} == 0)); then
	echo "==> no stage selected (ACC_STAGES='${ACC_STAGES:-}' BROKERS='$want_brokers' TF_ACC_CLIS='${TF_ACC_CLIS:-}')"
	exit 1
fi

summary_lines=()
say() {
	echo "$1"
	summary_lines+=("$1")
}
finish() {
	if [[ -n "${ACC_SUMMARY_FILE:-}" ]]; then printf '%s\n' "${summary_lines[@]}" >"$ACC_SUMMARY_FILE"; fi
	echo "==> acceptance: $( ((failed)) && echo FAIL || echo PASS)"
	exit "$failed"
}
# Whatever way the run ends, the brokers it started stop.
trap '[[ "${KEEP_BROKERS:-}" == 1 ]] || ./scripts/brokers.sh stop' EXIT
trap 'exit 130' INT TERM

# The brokers, made ready in the background while the CLIs are found (a cold
# run builds the 4.x chroots while OpenTofu builds).
needed=()
for line in "${selected[@]}"; do
	read -r _ _ broker _ <<<"$line"
	[[ "$broker" == - || " ${needed[*]:-} " == *" $broker "* ]] || needed+=("$broker")
done
brokers_pid=""
if ((${#needed[@]})); then
	echo "==> brokers: scripts/brokers.sh start ${needed[*]}"
	./scripts/brokers.sh start "${needed[@]}" &
	brokers_pid=$!
fi

# The CLIs.
cli_bin() {
	case "$1" in
	terraform) command -v "${TERRAFORM:-terraform}" || true ;;
	opentofu)
		if [[ -n "${TOFU:-}" ]]; then
			command -v "$TOFU" || true
		else
			./scripts/tofu.sh | tail -n 1 || true
		fi
		;;
	esac
}
# cli_version BIN: "1.11.4" from "Terraform v1.11.4" / "OpenTofu v1.10.10".
cli_version() { "$1" version 2>/dev/null | awk 'NR == 1 {sub(/^v/, "", $2); print $2}'; }
declare -A bins versions
for line in "${selected[@]}"; do
	read -r _ cli _ <<<"$line"
	[[ -n "${bins[$cli]:-}" ]] && continue
	[[ "$cli" == opentofu && -z "${TOFU:-}" ]] && echo "==> opentofu: scripts/tofu.sh (OpenTofu ${OPENTOFU_VERSION:-v1.10.10} in build/bin/tofu)"
	bins[$cli]="$(cli_bin "$cli")"
	if [[ -z "${bins[$cli]}" ]]; then
		echo "==> no $cli binary: install Terraform >= 1.8 or set TERRAFORM=; for OpenTofu run make tofu or set TOFU="
		bins[$cli]=missing
	else
		versions[$cli]="$(cli_version "${bins[$cli]}")"
	fi
done

if [[ -n "$brokers_pid" ]] && ! wait "$brokers_pid"; then
	say "==> brokers: FAIL (scripts/brokers.sh start ${needed[*]})"
	failed=1
	finish
fi

# One test binary for every stage.
echo "==> building the test binary: go test -c ./internal/provider"
if ! go test -c -o "$build_dir/provider.test" ./internal/provider; then
	say "==> acceptance: FAIL (the tests do not build)"
	failed=1
	finish
fi
# An empty CLI configuration: neither CLI reads ~/.terraformrc.
: >"$build_dir/acc.terraformrc"

# run_stage NAME CLI BROKER RUN SKIP: runs one stage; its result line goes to
# build/acc-NAME.result.
run_stage() {
	local name="$1" cli="$2" broker="$3" run="$4" skip="$5" log="$build_dir/acc-$name.log" start=$SECONDS
	local bin="${bins[$cli]}" host label args=(-test.count=1 -test.v -test.timeout "$timeout" -test.parallel "$parallel")
	[[ -n "${ACC_RUN:-}" && "$broker" != - ]] && run="$ACC_RUN"
	[[ "$run" != - ]] && args+=(-test.run "$run")
	[[ "$skip" != - ]] && args+=(-test.skip "$skip")
	case "$cli" in
	terraform) host=registry.terraform.io ;;
	*) host=registry.opentofu.org ;;
	esac
	label="$cli ${versions[$cli]:-?}"
	(
		if [[ "$broker" != - ]]; then
			set -a
			# shellcheck disable=SC1090
			. "$build_dir/brokers/$broker.env"
			set +a
			label="$label × RabbitMQ $BROKER_VERSION"
			# A broker with its own settings is named, e.g. "(4.3-quorum)".
			[[ "$BROKER_VERSION" == "$broker".* ]] || label="$label ($broker)"
			export TF_ACC=1
		else
			label="$label, CLI-driven unit tests"
			unset TF_ACC
		fi
		rc=0
		if [[ "$bin" == missing ]]; then
			echo "no $cli binary" >"$log"
			rc=1
		else
			cd internal/provider &&
				TF_ACC_TERRAFORM_PATH="$bin" TF_ACC_PROVIDER_HOST="$host" TF_ACC_PROVIDER_NAMESPACE=queuey \
					TF_CLI_CONFIG_FILE="$build_dir/acc.terraformrc" CHECKPOINT_DISABLE=1 \
					"$build_dir/provider.test" "${args[@]}" >"$log" 2>&1 || rc=$?
		fi
		passed=$(grep -c -- '^--- PASS: ' "$log")
		fails=$(grep -c -- '^--- FAIL: ' "$log")
		skipped=$(grep -c -- '^--- SKIP: ' "$log")
		result=PASS
		if ((rc != 0 || fails != 0 || skipped != 0 || passed == 0)); then result=FAIL; fi
		printf '%s\n' "==> acceptance $label: $passed passed, $fails failed, $skipped skipped ($((SECONDS - start))s, ${log#"$root"/})${result/PASS/}" \
			>"$build_dir/acc-$name.result"
		grep -E -- '^--- (FAIL|SKIP): ' "$log" | sed 's/^/      /' >>"$build_dir/acc-$name.result"
		[[ "$result" == PASS ]]
	)
}

# Run the stages, ACC_LANES at a time.
declare -A pids
for line in "${selected[@]}"; do
	read -r name cli broker run skip <<<"$line"
	[[ -n "${ACC_RUN:-}" && "$broker" != - ]] && run="$ACC_RUN"
	while (($(jobs -rp | wc -l) >= lanes)); do wait -n; done
	echo "==> stage $name: $cli on ${broker/#-/no broker}, -run ${run} -skip ${skip} -parallel $parallel"
	rm -f "$build_dir/acc-$name.result"
	run_stage "$name" "$cli" "$broker" "$run" "$skip" &
	pids[$name]=$!
done
for line in "${selected[@]}"; do
	read -r name _ <<<"$line"
	wait "${pids[$name]}" || failed=1
	if [[ -f "$build_dir/acc-$name.result" ]]; then
		say "$(head -n 1 "$build_dir/acc-$name.result")"
		tail -n +2 "$build_dir/acc-$name.result"
	else
		say "==> acceptance $name: FAIL (no result)"
		failed=1
	fi
done

# Deprecation check: warnings of deprecated features the run caused.
for broker in "${needed[@]}"; do
	(
		set -a
		# shellcheck disable=SC1090
		. "$build_dir/brokers/$broker.env"
		set +a
		[[ "$BROKER_VERSION" == 4.* && -n "$BROKER_LOG" && -r "$BROKER_LOG" ]] || exit 0
		# management_metrics_collection is warned about by the management
		# plugin itself at boot, whatever the tests do.
		found="$(tail -c +$((BROKER_LOG_OFFSET + 1)) "$BROKER_LOG" | grep -o 'Deprecated features: `[a-z_]*`' |
			grep -v management_metrics_collection | sort | uniq -c || true)"
		if [[ -z "$found" ]]; then
			echo "==> deprecation check RabbitMQ $BROKER_VERSION ($broker): PASS, no deprecated feature used"
		else
			echo "==> deprecation check RabbitMQ $BROKER_VERSION ($broker): FAIL, the run used deprecated features (see $BROKER_LOG):"
			echo "$found" | sed 's/^/      /'
			exit 1
		fi
	) >"$build_dir/acc-deprecation-$broker.result" || failed=1
	if [[ -s "$build_dir/acc-deprecation-$broker.result" ]]; then
		say "$(head -n 1 "$build_dir/acc-deprecation-$broker.result")"
		tail -n +2 "$build_dir/acc-deprecation-$broker.result"
	fi
done
finish
