#!/usr/bin/env bash
# Mutation testing (make mutate): gremlins changes the code one small step at
# a time (a < that becomes <=, a + that becomes -, a condition negated) and
# runs the package's unit tests against each change, a "mutant". A mutant the
# tests fail on is KILLED; one they pass is LIVED: a missing test, or a change
# that makes no difference (an equivalent mutant). NOT COVERED: no test runs
# that line at all. Efficacy = killed / (killed + lived).
#
# The packages and the efficacy each must reach:
#   internal/topology  95%  the pure rules, every file
#   internal/broker    90%  the management API client, every file
#   internal/provider  85%  the lifecycle rules that unit tests reach: destroy
#                           decisions (resource_queue_destroy.go,
#                           resource_queue_cluster.go, resource_queue_checks.go),
#                           replacement (resource_queue_replace.go), a
#                           change that declares q again
#                           (resource_queue_redeclare*.go), move
#                           sources (resource_queue_move.go), the list filter
#                           (list_resource_queue.go, data_source_hold_queues.go),
#                           error classification (format.go) and queue IDs
#                           (queue_id.go); the other files are Terraform glue,
#                           left out with --exclude-files (PROVIDER_GLUE below)
# The tests run with GOFLAGS="-count=1 -short": -short skips the tests that
# drive the Terraform CLI (unitTest and needsCLI in
# internal/provider/cli_harness_test.go), which take most of the provider's test
# time; the rules above have fast tests of their own, and the glue those CLI
# tests reach is not mutated.
#
# Each package prints one line, e.g.
#   ==> mutate internal/topology: 187 killed, 3 lived, 7 not covered, efficacy 98.42% (target 95%): PASS (4m31s, build/mutate-topology.log)
# followed by the mutants that lived (file:line:column and the kind of change).
# The equivalent ones are argued where the rule lives (a comment beside it) or
# in the note of the change that left them; every other one wants a test.
#
# Variables:
#   MUTATE_PKGS        packages to run (default: topology broker provider)
#   GREMLINS           the gremlins binary (default build/bin/gremlins, which
#                      make mutate installs: gremlins v0.6.0)
#   MUTATE_WORKERS     mutants at once (default 1: each runs a package's tests)
#   MUTATE_TIMEOUT_COEFFICIENT  gremlins --timeout-coefficient (default 10; a
#                      mutant's time limit is the coverage run's times this,
#                      and a lower one times mutants out while they compile)
# Never pass gremlins --test-cpu: v0.6.0 hands `-cpu N` to go test as one
# argument, go test then runs nothing, and every mutant counts as killed.
# Exits non-zero when a package misses its target or gremlins fails.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
mkdir -p build
gremlins="${GREMLINS:-$root/build/bin/gremlins}"
workers="${MUTATE_WORKERS:-1}"
coefficient="${MUTATE_TIMEOUT_COEFFICIENT:-10}"
read -r -a pkgs <<<"${MUTATE_PKGS:-topology broker provider}"

# The provider's files that are Terraform glue (schemas, CRUD plumbing,
# functions and data sources whose rules live in internal/topology), reached
# only by the CLI-driven tests.
PROVIDER_GLUE=(
	provider provider_auth provider_configure provider_data pure_inputs validators
	data_source_hold_queue data_source_topology 'function_[a-z_]+'
	resource_queue resource_queue_identity resource_queue_plan resource_queue_read resource_queue_state
)

declare -A target=([topology]=95 [broker]=90 [provider]=85)
failed=0
summary=()
for pkg in "${pkgs[@]}"; do
	args=(unleash --workers "$workers" --timeout-coefficient "$coefficient" -o "build/mutate-$pkg.json")
	if [[ "$pkg" == provider ]]; then
		for f in "${PROVIDER_GLUE[@]}"; do args+=(--exclude-files "(^|/)$f\\.go\$"); done
	fi
	log="build/mutate-$pkg.log"
	start=$SECONDS
	echo "==> gremlins ${args[*]} ./internal/$pkg > $log"
	GOFLAGS="-count=1 -short" "$gremlins" "${args[@]}" "./internal/$pkg" >"$log" 2>&1
	rc=$?
	took="$(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s"
	read -r killed lived notcov < <(awk -F'[:,] *' '/^Killed: /{print $2, $4, $6}' "$log")
	want="${target[$pkg]:-0}"
	if ((rc != 0)) || [[ -z "${killed:-}" ]]; then
		line="==> mutate internal/$pkg: FAIL, gremlins exited $rc ($took, $log)"
		failed=1
	else
		efficacy="$(awk -v k="$killed" -v l="$lived" 'BEGIN {if (k + l == 0) print "0.00"; else printf "%.2f", 100 * k / (k + l)}')"
		result=PASS
		if awk -v e="$efficacy" -v w="$want" 'BEGIN {exit !(e < w)}'; then
			result=FAIL
			failed=1
		fi
		line="==> mutate internal/$pkg: $killed killed, $lived lived, $notcov not covered, efficacy $efficacy% (target $want%): $result ($took, $log)"
	fi
	echo "$line"
	grep -E '^ *(LIVED|TIMED OUT) ' "$log" | sed 's/^ */      /'
	summary+=("$line")
done
echo
echo "==> summary"
printf '%s\n' "${summary[@]}"
echo "==> mutate: $( ((failed)) && echo FAIL || echo PASS)"
exit "$failed"
