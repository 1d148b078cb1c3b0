#!/usr/bin/env bash
# make mutate: gremlins (GREMLINS) over the packages of MUTATE_PKGS, one at a
# time, MUTATE_WORKERS mutants at once, with -short (no CLI-driven test); one
# line per package against its target, then the mutants that lived. How to
# read it: CONTRIBUTING.md, "Mutation testing". Never pass --test-cpu:
# gremlins v0.6.0 hands go test `-cpu N` as one argument, go test then runs
# nothing, and every mutant counts as killed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
mkdir -p build
gremlins="${GREMLINS:-build/bin/gremlins}"
read -r -a pkgs <<<"${MUTATE_PKGS:-topology broker mover tlscause provider}"
# The provider's Terraform glue (schemas, CRUD plumbing, functions and data
# sources whose rules live in internal/topology), reached only by the
# CLI-driven tests: not mutated.
PROVIDER_GLUE=(
	provider provider_auth provider_configure provider_data pure_inputs validators
	data_source_hold_queue data_source_topology 'function_[a-z_]+'
	resource_queue resource_queue_identity resource_queue_plan resource_queue_read resource_queue_state
)
# internal/broker and internal/mover are mutated whole; the mover's unit tests
# run against internal/brokertest's AMQP port (amqp_server.go). Their tests
# mostly wait (timers, the fakes' answers), so -parallel=8 (the default is
# the number of cores) shortens each mutant's test run on 2 cores.
declare -A target=([topology]=95 [broker]=90 [mover]=90 [tlscause]=90 [provider]=85)
declare -A goflags=([broker]="-parallel=8" [mover]="-parallel=8")
failed=0 summary=()
for pkg in "${pkgs[@]}"; do
	# A mutant's time limit is the coverage run's times the coefficient; a
	# lower one times mutants out while they compile.
	args=(unleash --workers "${MUTATE_WORKERS:-1}" --timeout-coefficient "${MUTATE_TIMEOUT_COEFFICIENT:-10}" -o "build/mutate-$pkg.json")
	if [[ "$pkg" == provider ]]; then
		for f in "${PROVIDER_GLUE[@]}"; do args+=(--exclude-files "(^|/)$f\\.go\$"); done
	fi
	log="build/mutate-$pkg.log" start=$SECONDS
	echo "==> gremlins ${args[*]} ./internal/$pkg > $log"
	GOFLAGS="-count=1 -short ${goflags[$pkg]:-}" "$gremlins" "${args[@]}" "./internal/$pkg" >"$log" 2>&1
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
		if awk -v e="$efficacy" -v w="$want" 'BEGIN {exit !(e < w)}'; then result=FAIL failed=1; fi
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
