#!/usr/bin/env bash
# Acceptance tests of the provider on the broker matrix, in stages: one stage
# per CLI × broker (the second part of `make test`, and `make testacc`).
#
# A stage is one line of STAGES below:
#   NAME  CLI  BROKER  RUN  SKIP
# CLI is one of
#   terraform     the machine's Terraform: TERRAFORM, default terraform on PATH
#                 (1.11.4 on the project's machines), whatever its version
#   terraform@V   Terraform V: TERRAFORM or terraform on PATH when it is V, else
#                 built once by scripts/terraform.sh into $QUEUEY_CACHE/cli
#   opentofu@V    OpenTofu V: TOFU or tofu on PATH when it is V, else built once
#                 by scripts/tofu.sh into $QUEUEY_CACHE/cli
#   opentofu      TOFU whatever its version, else opentofu@OPENTOFU_VERSION
# (the versions come from TERRAFORM_NEWEST_VERSION, TERRAFORM_OLDEST_VERSION,
# OPENTOFU_VERSION and OPENTOFU_OLDEST_VERSION); BROKER a name of
# scripts/brokers.sh ("-" for none), RUN and SKIP the go test -run and -skip
# patterns ("-" for none). Adding a stage is adding a line (and, for a new
# broker, a line to BROKERS in scripts/brokers.sh).
#
# Which stage runs what: every stage on a plain broker (terraform-*,
# opentofu-*) runs the whole acceptance suite, RUN TestAcc, minus the tests
# that need a broker of their own (SKIP: the node-wide quorum refusal, OAuth
# 2.0, restarts and node failures), which run in the stages of their own
# (node-quorum-4.3, oauth-*, resil). The newest Terraform runs the suite on
# both ends of the broker range (terraform-newest-3.10, terraform-newest-4.3)
# and the OAuth 2.0 tests on oauth-4.3-newest, so the tests of the newest
# features (actions, destroy events; the redrive with a token) run on RabbitMQ
# 3.10 and 4.3, and over OAuth 2.0. opentofu-unit runs the unit tests that
# drive the CLI (RUN ., SKIP TestAcc) on OpenTofu. No stage picks tests by
# the words in their names: a test that needs a feature some CLI of the
# matrix lacks states it, by the feature, with the one helper needsCLI (or
# unitTest) of internal/provider/cli_harness_test.go, which knows the first
# Terraform and OpenTofu version of each feature:
#   featureFunctions            provider functions: Terraform 1.8, OpenTofu 1.7
#   featureMove                 `moved` across resource types: Terraform 1.8,
#                               OpenTofu 1.10
#   featureIdentity             resource identity: Terraform 1.12, OpenTofu 1.12
#   featureQuery                list resources, `terraform query`: Terraform
#                               1.14, no OpenTofu
#   featureActions              actions: Terraform 1.14, no OpenTofu
#   featureActionDestroyEvents  actions on destroy events: Terraform 1.16
# On a CLI (the version the binary reports) that lacks one, the test skips
# itself and appends its name to the file QUEUEY_EXPECTED_SKIPS names
# (build/acc-NAME.expected-skips, one per stage). A stage passes when no test
# fails and every test skipped is listed there: any other skip (a test that
# skips itself for another reason, or a needsCLI that records nothing) fails
# the stage. So on the newest CLIs every test runs, and e.g. Terraform 1.11
# skips the identity and query tests, saying so in its summary line.
#
# The stages run ACC_LANES at a time (default 2) from one test binary, each
# with go test -parallel ACC_PARALLEL (default 4); every broker a stage needs
# is made ready first by scripts/brokers.sh, and every broker this run started
# is stopped when it ends (the machine's own broker never is). The CLIs the
# machine lacks are built while the brokers start (a cold build takes 2-4
# minutes each on an idle machine, later runs reuse the cache). The CLIs, the
# chroots and the test binary are built before the first stage starts, and no
# stage depends on the machine being idle (the restarts of the resil stage are
# arranged by a proxy holding the operation's requests, not by timing).
# After the stages, a deprecation check reads the log of each 4.x node the
# stages used: a "Deprecated features" warning written during the run fails it
# (RabbitMQ 4.3 warns once something the next version removes is used:
# transient non-exclusive queues, x-queue-mode, x-queue-version, global QoS,
# ...).
#
# Each stage prints one line, with the versions the CLI and the broker
# report, e.g.
#   ==> acceptance terraform 1.11.4 × RabbitMQ 3.10.25: 40 passed, 0 failed, 9 skipped, all for features the CLI lacks (97s, build/acc-terraform-3.10.log)
# followed by each test that failed or skipped unexpectedly, and logs to
# build/acc-NAME.log.
#
# Variables:
#   ACC_STAGES        names of the stages to run (default: all of STAGES)
#   BROKERS / BROKER  run only the stages on these brokers (e.g. BROKER=4.3); a
#                     CLI of TF_ACC_CLIS (default terraform) without a stage on
#                     such a broker gets one, running the whole suite
#   TF_ACC_CLIS       run only the stages of these CLIs (terraform, opentofu, or
#                     one version: terraform@1.16.4)
#   TERRAFORM, TOFU   binaries of the CLIs (above)
#   TERRAFORM_NEWEST_VERSION (1.16.4), TERRAFORM_OLDEST_VERSION (1.8.5),
#   OPENTOFU_VERSION (1.12.6), OPENTOFU_OLDEST_VERSION (1.10.10)
#                     the versions of the stages' CLIs
#   ACC_RUN           replaces RUN of every stage (a stage whose tests of it all
#                     skip for its CLI passes, saying so); ACC_TIMEOUT go test
#                     -timeout (60m)
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
own="TestAccNodeQuorum|TestAccOAuth2_|TestAccBearerToken_|TestAccRestart_|TestAccCluster_|TestAccFaultMove_"
# The CLIs of the matrix besides the machine's Terraform.
tf_newest="terraform@${TERRAFORM_NEWEST_VERSION:-1.16.4}"
tf_oldest="terraform@${TERRAFORM_OLDEST_VERSION:-1.8.5}"
tofu_newest="opentofu@${OPENTOFU_VERSION:-1.12.6}"
tofu_oldest="opentofu@${OPENTOFU_OLDEST_VERSION:-1.10.10}"
tf_newest="${tf_newest/@v/@}" tf_oldest="${tf_oldest/@v/@}" tofu_newest="${tofu_newest/@v/@}" tofu_oldest="${tofu_oldest/@v/@}"
STAGES=(
	"terraform-3.10        terraform      3.10       TestAcc           $own"
	"terraform-4.0         terraform      4.0        TestAcc           $own"
	"terraform-4.3         terraform      4.3        TestAcc           $own"
	"terraform-newest-3.10 $tf_newest     3.10       TestAcc           $own"
	"terraform-newest-4.3  $tf_newest     4.3        TestAcc           $own"
	"terraform-oldest-3.10 $tf_oldest     3.10       TestAcc           $own"
	"opentofu-4.3          $tofu_newest   4.3        TestAcc           $own"
	"opentofu-oldest-4.0   $tofu_oldest   4.0        TestAcc           $own"
	"opentofu-unit         $tofu_newest   -          .                 TestAcc"
	"node-quorum-4.3       terraform      4.3-quorum TestAccNodeQuorum -"
	"oauth-3.10            terraform      oauth-3.10 $oauth            -"
	"oauth-4.3             terraform      oauth-4.3  $oauth            -"
	"oauth-4.3-newest      $tf_newest     oauth-4.3  $oauth            -"
	"oauth-4.3-tofu        $tofu_newest   oauth-4.3  $oauth            -"
	"faults-3.10           $tf_newest     3.10       TestAccFaultMove_ -"
	"faults-4.3            $tf_newest     4.3        TestAccFaultMove_ -"
)
# The restarts and node failures (five nodes of their own, about 6 minutes
# with their start; make testresil runs this stage alone, ACC_RESIL=0 leaves
# it out). The longest stage, so it goes first: the other lane runs the
# shorter stages beside it instead of it running alone at the end.
if [[ "${ACC_RESIL:-1}" == 1 ]]; then
	STAGES=("resil                 terraform      resil      TestAccRestart_|TestAccCluster_ -" "${STAGES[@]}")
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
# cli_is CLI WANTED: CLI (terraform@1.16.4) is WANTED (terraform@1.16.4 or terraform).
cli_is() { [[ "$1" == "$2" || "${1%@*}" == "$2" ]]; }
cli_wanted() {
	local w
	[[ -z "$clis_wanted" ]] && return 0
	for w in $clis_wanted; do cli_is "$1" "$w" && return 0; done
	return 1
}
has_stage() {
	local line name cli broker
	for line in "${STAGES[@]}"; do
		read -r name cli broker _ <<<"$line"
		[[ "$broker" == "$2" ]] && cli_is "$cli" "$1" && return 0
	done
	return 1
}
for line in "${STAGES[@]}"; do
	read -r name cli broker _ <<<"$line"
	if [[ -n "${ACC_STAGES:-}" && " $ACC_STAGES " != *" $name "* ]]; then continue; fi
	if [[ -n "$want_brokers" && " $want_brokers " != *" $broker "* ]]; then continue; fi
	cli_wanted "$cli" || continue
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
# run builds the 4.x chroots while the CLIs build).
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
# cli_version BIN: "1.11.4" from "Terraform v1.11.4" / "OpenTofu v1.10.10".
# (The version line need not come first: with TF_CLI_CONFIG_FILE naming a
# missing file, OpenTofu 1.12 prints a warning about it on stdout before it.)
cli_version() { CHECKPOINT_DISABLE=1 "$1" version 2>/dev/null | awk '!f && /^(Terraform|OpenTofu) v/ {sub(/^v/, "", $2); print $2; f = 1}'; }
# cli_bin CLI: the binary of a CLI of STAGES (empty when there is none).
cli_bin() {
	local cli="$1" want="${1#*@}" own
	case "$cli" in
	terraform) command -v "${TERRAFORM:-terraform}" || true ;;
	opentofu) if [[ -n "${TOFU:-}" ]]; then command -v "$TOFU" || true; else cli_bin "$tofu_newest"; fi ;;
	terraform@* | opentofu@*)
		# The machine's binary when it is that version, else the cached build.
		if [[ "$cli" == terraform@* ]]; then own="$(command -v "${TERRAFORM:-terraform}" || true)"; else own="$(command -v "${TOFU:-tofu}" || true)"; fi
		if [[ -n "$own" && "$(cli_version "$own")" == "$want" ]]; then
			echo "$own"
		elif [[ "$cli" == terraform@* ]]; then
			echo "==> $cli: scripts/terraform.sh" >&2
			TERRAFORM_VERSION="$want" ./scripts/terraform.sh | tail -n 1 || true
		else
			echo "==> $cli: scripts/tofu.sh" >&2
			OPENTOFU_VERSION="$want" ./scripts/tofu.sh | tail -n 1 || true
		fi
		;;
	esac
}
declare -A bins versions
for line in "${selected[@]}"; do
	read -r _ cli _ <<<"$line"
	[[ -n "${bins[$cli]:-}" ]] && continue
	bins[$cli]="$(cli_bin "$cli")"
	if [[ -z "${bins[$cli]}" ]]; then
		echo "==> no $cli binary: install Terraform or set TERRAFORM=; the versioned CLIs come from scripts/terraform.sh and scripts/tofu.sh (see above)"
		bins[$cli]=missing
	else
		versions[$cli]="$(cli_version "${bins[$cli]}")"
		if [[ "$cli" == *@* && "${versions[$cli]}" != "${cli#*@}" ]]; then
			echo "==> $cli: ${bins[$cli]} reports version '${versions[$cli]}'"
			bins[$cli]=missing
		fi
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
	local expected="$build_dir/acc-$name.expected-skips"
	: >"$expected"
	[[ -n "${ACC_RUN:-}" && "$broker" != - ]] && run="$ACC_RUN"
	[[ "$run" != - ]] && args+=(-test.run "$run")
	[[ "$skip" != - ]] && args+=(-test.skip "$skip")
	case "$cli" in
	terraform*) host=registry.terraform.io ;;
	*) host=registry.opentofu.org ;;
	esac
	label="${cli%@*} ${versions[$cli]:-?}"
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
				QUEUEY_EXPECTED_SKIPS="$expected" TF_ACC_TERRAFORM_PATH="$bin" TF_ACC_PROVIDER_HOST="$host" TF_ACC_PROVIDER_NAMESPACE=queuey \
					TF_CLI_CONFIG_FILE="$build_dir/acc.terraformrc" CHECKPOINT_DISABLE=1 \
					"$build_dir/provider.test" "${args[@]}" >"$log" 2>&1 || rc=$?
		fi
		passed=$(grep -c -- '^--- PASS: ' "$log")
		fails=$(grep -c -- '^--- FAIL: ' "$log")
		# Skips, subtests' too: those needsCLI recorded were expected.
		skipped=0 unexpected=()
		while read -r test; do
			skipped=$((skipped + 1))
			grep -qxF -- "$test" "$expected" || unexpected+=("$test")
		done < <(grep -E -- '^ *--- SKIP: ' "$log" | awk '{print $3}')
		result=PASS note=""
		if ((skipped > 0)); then
			note=", all for features the CLI lacks"
			((${#unexpected[@]})) && note=", ${#unexpected[@]} of them unexpected"
		fi
		if ((rc != 0 || fails != 0 || ${#unexpected[@]} != 0)); then
			result=" FAIL"
		elif ((passed == 0)); then
			# ACC_RUN may pick only tests of features this CLI lacks:
			# nothing run is no failure then.
			if [[ -n "${ACC_RUN:-}" && "$broker" != - ]]; then note="$note, no test of ACC_RUN runs on this CLI"; else result=" FAIL"; fi
		fi
		printf '%s\n' "==> acceptance $label: $passed passed, $fails failed, $skipped skipped$note ($((SECONDS - start))s, ${log#"$root"/})${result/#PASS/}" \
			>"$build_dir/acc-$name.result"
		grep -E -- '^--- FAIL: ' "$log" | sed 's/^/      /' >>"$build_dir/acc-$name.result"
		grep -- '^==> fault ' "$log" >>"$build_dir/acc-$name.result"
		for test in "${unexpected[@]}"; do
			echo "      --- SKIP: $test (unexpected: not for a feature its CLI lacks; see ${log#"$root"/})" >>"$build_dir/acc-$name.result"
		done
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
