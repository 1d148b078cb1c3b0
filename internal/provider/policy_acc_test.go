package provider

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// The policy check on real brokers. A policy applies to a whole vhost and the acceptance tests run
// in parallel against shared brokers, so every test here puts its policies in a vhost of its own,
// deleted at cleanup with its policies and queues; none touches "/".

// newVhost makes a vhost for one test (see createVhost) and returns its name.
func newVhost(t *testing.T, prefix string) string {
	t.Helper()
	vhost := uniqueName(prefix)
	createVhost(t, vhost, "")
	return vhost
}

// providerConfig is the provider in the vhost %[1]q with the lines %[2]s more in its block, then the
// blocks %[3]s.
const providerConfig = requiredQueuey + "\nprovider \"queuey\" {\n  vhost = %q\n%s}\n\n%s"

// queueBlock is a queuey_queue named name, with more lines of extra.
func queueBlock(name, extra string) string {
	return fmt.Sprintf("resource \"queuey_queue\" \"q\" {\n  name = %q\n%s}\n", name, extra)
}

// declareIn declares queue in vhost through the management API with args.
func declareIn(t *testing.T, vhost, queue string, args map[string]any) {
	t.Helper()
	if err := accClient(t).DeclareQueue(context.Background(), vhost, queue, args); err != nil {
		t.Fatalf("declaring %q in vhost %q: %v", queue, vhost, err)
	}
}

// declareHoldIn declares the hold queue of queue for ttlMs in vhost with the arguments the backend
// gives it, so that the plan finds an existing hold queue, and returns its name.
func declareHoldIn(t *testing.T, vhost, queue string, ttlMs int64) string {
	t.Helper()
	name := topology.HoldQueueName(queue, ttlMs, topology.DefaultSuffixes())
	declareIn(t, vhost, name, orFatal(topology.HoldQueueArgs(queue, ttlMs))(t).Map())
	return name
}

// exactly is a policy pattern matching name alone.
func exactly(name string) string { return "^" + topology.QuotePCRE(name) + "$" }

// wantSaid fails the test for each phrase out does not hold, whatever the line wrapping.
func wantSaid(t *testing.T, what, out string, phrases ...string) {
	t.Helper()
	for _, p := range phrases {
		if !strings.Contains(flatten(out), p) {
			t.Errorf("%s does not say %q:\n%s", what, p, out)
		}
	}
}

// A message-ttl policy on q.dead's name: the plan warns, naming the policy, the queue, the key and
// value and what it does; under policy_check = "error" the plan fails and nothing is declared.
func TestAccPolicy_deadQueueMessageTTL(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t)
	t.Parallel()
	vhost := newVhost(t, "pol-dead")
	name := uniqueName("dead")
	fatalOn(t, accAdmin(t).PutPolicy(t.Context(), vhost, brokertest.Policy{Name: "dead-ttl", Pattern: exactly(name + ".dead"), Priority: 1,
		Definition: map[string]any{"message-ttl": 2000}}))

	out := newTerraformCLI(t, fmt.Sprintf(providerConfig, vhost, "", queueBlock(name, ""))).mustRun("plan")
	wantSaid(t, "the plan", out,
		`Warning: Policy "dead-ttl" Breaks Queue `+name+`.dead`,
		`message-ttl = 2000: expires messages on `+name+`.dead after 2000 ms`,
		`policy_pattern_excluding`)
	if n := strings.Count(out, "Breaks Queue"); n != 1 {
		t.Errorf("the plan names %d broken queues, want 1 (%s.dead):\n%s", n, name, out)
	}

	out, err := newTerraformCLI(t, fmt.Sprintf(providerConfig, vhost, "  policy_check = \"error\"\n", queueBlock(name, ""))).run("apply", "-auto-approve")
	if err == nil {
		t.Fatalf("policy_check = \"error\": the apply passed:\n%s", out)
	}
	wantSaid(t, "the failed plan", out, `Error: Policy "dead-ttl" Breaks Queue `+name+`.dead`)
	for _, q := range []string{name, name + ".dead"} {
		if queueExists(t, vhost, q) {
			t.Errorf("policy_check = \"error\" declared %s", q)
		}
	}
}

// An operator policy with max-length on the name of an existing hold queue: the plan warns, and
// says that only the cluster's operator can change it.
func TestAccPolicy_operatorMaxLengthOnHoldQueue(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t)
	t.Parallel()
	vhost := newVhost(t, "pol-op")
	name := uniqueName("ophold")
	hold := declareHoldIn(t, vhost, name, 600000)
	// Operator policies accept only some keys (3.10: message-ttl, expires, max-length,
	// max-length-bytes, max-in-memory-*, delivery-limit); max-length is one on every version.
	fatalOn(t, accAdmin(t).PutOperatorPolicy(t.Context(), vhost, brokertest.Policy{Name: "cap", Pattern: exactly(hold), ApplyTo: "queues",
		Definition: map[string]any{"max-length": 5}}))

	out := newTerraformCLI(t, fmt.Sprintf(providerConfig, vhost, "", queueBlock(name, ""))).mustRun("plan")
	wantSaid(t, "the plan", out,
		`Warning: Operator Policy "cap" Breaks Queue `+hold,
		`max-length = 5: limits `+hold+` to 5`,
		`ask the cluster's operator`)
	if n := strings.Count(out, "Breaks Queue"); n != 1 {
		t.Errorf("the plan names %d broken queues, want 1 (%s):\n%s", n, hold, out)
	}
}

// An expires policy on an existing hold queue's name: at the hold queue's ttl_ms it is deleted no
// later than the wait it owes, so the plan warns; at ttl_ms + 1 it outlives it, and the plan says
// nothing. The pattern matches that hold queue alone, not the longest one the plan also checks.
func TestAccPolicy_expiresOnHoldQueueEdge(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t)
	t.Parallel()
	const ttl = 600000
	vhost := newVhost(t, "pol-exp")
	name := uniqueName("exphold")
	hold := declareHoldIn(t, vhost, name, ttl)
	tf := newTerraformCLI(t, fmt.Sprintf(providerConfig, vhost, "", queueBlock(name, "")))

	fatalOn(t, accAdmin(t).PutPolicy(t.Context(), vhost, brokertest.Policy{Name: "expiry", Pattern: exactly(hold), Definition: map[string]any{"expires": ttl}}))
	out := tf.mustRun("plan")
	wantSaid(t, "the plan at ttl_ms", out,
		`Warning: Policy "expiry" Breaks Queue `+hold,
		fmt.Sprintf(`expires = %d: deletes %s %d ms after its last use`, ttl, hold, ttl))

	fatalOn(t, accAdmin(t).PutPolicy(t.Context(), vhost, brokertest.Policy{Name: "expiry", Pattern: exactly(hold),
		Definition: map[string]any{"expires": ttl + 1}}))
	if out := tf.mustRun("plan"); strings.Contains(out, "Breaks Queue") || strings.Contains(out, "Policy Check") {
		t.Errorf("expires = ttl_ms + 1 warned:\n%s", out)
	}
	if !queueExists(t, vhost, hold) {
		t.Fatalf("%s is gone: the plan at ttl_ms + 1 had no hold queue to check", hold)
	}
}

// A harmless policy on every name of the vhost gives no warning, at the create plan nor at the
// plan after the apply; a breaking one put after the apply is found by the plan without changes.
func TestAccPolicy_harmlessSaysNothing(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t)
	t.Parallel()
	vhost := newVhost(t, "pol-harmless")
	name := uniqueName("harmless")
	fatalOn(t, accAdmin(t).PutPolicy(t.Context(), vhost, brokertest.Policy{Name: "version", Pattern: ".*", Definition: map[string]any{"queue-version": 2}}))
	tf := newTerraformCLI(t, fmt.Sprintf(providerConfig, vhost, "", queueBlock(name, "")))
	quiet := func(what, out string) {
		t.Helper()
		if strings.Contains(out, "Breaks Queue") || strings.Contains(out, `"version"`) || strings.Contains(out, "Policy Check") {
			t.Errorf("%s warned of a harmless policy:\n%s", what, out)
		}
	}
	quiet("the create plan", tf.mustRun("plan"))
	quiet("the apply", tf.mustRun("apply", "-auto-approve"))
	out := tf.mustRun("plan")
	quiet("the plan after the apply", out)
	wantSaid(t, "the plan after the apply", out, "No changes.")

	fatalOn(t, accAdmin(t).PutPolicy(t.Context(), vhost, brokertest.Policy{Name: "limits", Pattern: ".*", Priority: 5,
		Definition: map[string]any{"max-length": 1000}}))
	out = tf.mustRun("plan")
	wantSaid(t, "the plan without changes", out, "No changes.",
		`Warning: Policy "limits" Breaks Queue `+name,
		`Warning: Policy "limits" Breaks Queue `+name+`.dead`)
}

// policyDeadline bounds the wait for a queue's policy fields to show what a test arranged: they are
// statistics, emitted periodically, so they lag a declaration and a change of policy.
const policyDeadline = 90 * time.Second

// waitForPolicy polls the broker's answer for queue in vhost (its policy, operator policy and
// effective definition) until disagree finds nothing against it, saying "", or policyDeadline
// passes; then the test fails with what disagree said last.
func waitForPolicy(t *testing.T, vhost, queue string, disagree func(pol, op string, eff map[string]any) string) {
	t.Helper()
	last := "no policy fields yet"
	if !eventually(policyDeadline, func() bool {
		pol, op, eff, err := accAdmin(t).QueuePolicy(t.Context(), vhost, queue)
		if err != nil && !errors.Is(err, brokertest.ErrPolicyNotReported) {
			t.Fatalf("%s: %v", queue, err)
		}
		if err == nil {
			last = disagree(pol, op, eff)
		}
		return err == nil && last == ""
	}) {
		t.Errorf("%s: the broker answers %s", queue, last)
	}
}

// Which policies apply to a queue, as the provider computes it from the vhost's listings, agrees
// with the broker's own answer for existing queues: the highest priority wins; of a tie the
// broker picks one of the tied; a policy with a key classic queues do not support is skipped for
// the next-highest; apply-to exchanges (and quorum_queues) leaves classic queues out, classic_queues
// (3.12+) covers them; an operator policy merges with the user policy by the minimum.
func TestAccPolicy_applyingAgreesWithBroker(t *testing.T) {
	testAccPreCheck(t)
	t.Parallel()
	ctx := context.Background()
	vhost := newVhost(t, "pol-match")
	ov, err := accAdmin(t).Overview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	full := ov.RabbitMQVersion
	v, err := topology.ParseBrokerVersion(full)
	if err != nil {
		t.Fatal(err)
	}
	knowsQueueTypes := v.Major > 3 || (v.Major == 3 && v.Minor >= 12) // classic_queues, quorum_queues

	type def = map[string]any
	user := []brokertest.Policy{
		{Name: "prio-low", Pattern: `^prio\.`, Priority: 1, Definition: def{"message-ttl": 60000}},
		{Name: "prio-high", Pattern: `^prio\.high$`, Priority: 5, Definition: def{"max-length": 100}},
		{Name: "tie-a", Pattern: `^tie\.`, Priority: 3, Definition: def{"max-length": 10}},
		{Name: "tie-b", Pattern: `^tie\.`, Priority: 3, Definition: def{"max-length": 20}},
		{Name: "quorum-key", Pattern: `^unsupported\.`, Priority: 10, Definition: def{"delivery-limit": 5}},
		{Name: "fallback", Pattern: `^unsupported\.`, Priority: 1, Definition: def{"expires": 3600000}},
		{Name: "exchanges-only", Pattern: `^applyto\.`, ApplyTo: "exchanges", Priority: 9, Definition: def{"max-length": 1}},
		{Name: "queues", Pattern: `^applyto\.`, ApplyTo: "queues", Priority: 1, Definition: def{"max-length": 50}},
		{Name: "limits", Pattern: `^merged\.`, Priority: 1, Definition: def{"max-length": 100, "message-ttl": 1000, "expires": 3600000}},
	}
	operator := []brokertest.Policy{
		{Name: "op-limits", Pattern: `^merged\.`, ApplyTo: "queues", Definition: def{"max-length": 10, "message-ttl": 5000}},
		{Name: "op-quorum-key", Pattern: `^merged\.`, ApplyTo: "queues", Priority: 5, Definition: def{"delivery-limit": 3}},
	}
	// The names of the user and operator policies each queue must get: more than one is a tie.
	want := map[string][2][]string{
		"prio.low":        {{"prio-low"}, nil},
		"prio.high":       {{"prio-high"}, nil},
		"tie.one":         {{"tie-a", "tie-b"}, nil},
		"unsupported.one": {{"fallback"}, nil},
		"applyto.plain":   {{"queues"}, nil},
		"applyto.classic": {{"queues"}, nil},
		"merged.one":      {{"limits"}, {"op-limits"}},
		"none":            {nil, nil},
	}
	if knowsQueueTypes {
		user = append(user,
			brokertest.Policy{Name: "classic-only", Pattern: `^applyto\.classic$`, ApplyTo: "classic_queues", Priority: 7, Definition: def{"max-length": 70}},
			brokertest.Policy{Name: "quorum-only", Pattern: `^applyto\.`, ApplyTo: "quorum_queues", Priority: 8, Definition: def{"max-length": 80}})
		want["applyto.classic"] = [2][]string{{"classic-only"}, nil}
	}
	for _, p := range user {
		fatalOn(t, accAdmin(t).PutPolicy(t.Context(), vhost, p))
	}
	for _, p := range operator {
		fatalOn(t, accAdmin(t).PutOperatorPolicy(t.Context(), vhost, p))
	}
	pols, err := accClient(t).Policies(ctx, vhost)
	if err != nil {
		t.Fatal(err)
	}
	tu, to := topologyPolicies(pols.User), topologyPolicies(pols.Operator)
	byName := func(list []topology.Policy, name string) map[string]any {
		for _, p := range list {
			if p.Name == name {
				return p.Definition
			}
		}
		return nil
	}
	names := func(chosen *topology.Policy, tied []topology.Policy) []string {
		if chosen == nil {
			return nil
		}
		out := []string{chosen.Name}
		for _, p := range tied {
			out = append(out, p.Name)
		}
		slices.Sort(out)
		return out
	}

	for q := range want {
		declareIn(t, vhost, q, nil)
	}
	for q, w := range want {
		applied := topology.ApplyingPoliciesOn(v, q, tu, to)
		if len(applied.Unevaluable) > 0 {
			t.Errorf("%s: patterns not evaluated: %v", q, applied.Unevaluable)
		}
		gotUser, gotOp := names(applied.User, applied.TiedUser), names(applied.Operator, applied.TiedOperator)
		if !slices.Equal(gotUser, w[0]) || !slices.Equal(gotOp, w[1]) {
			t.Errorf("RabbitMQ %s, %s: computed policies %v and operator policies %v, want %v and %v", full, q, gotUser, gotOp, w[0], w[1])
			continue
		}
		// The broker's answer, until it shows one of the computed policies with the merged definition.
		waitForPolicy(t, vhost, q, func(pol, op string, eff map[string]any) string {
			// Numbers on both sides are json.Number, as the broker wrote them.
			merged := topology.MergedPolicyDefinition(byName(tu, pol), byName(to, op))
			if (pol == "" && len(w[0]) == 0 || slices.Contains(w[0], pol)) &&
				(op == "" && len(w[1]) == 0 || slices.Contains(w[1], op)) && reflect.DeepEqual(merged, eff) {
				t.Logf("RabbitMQ %s, %s: policy %q, operator policy %q, effective %v", full, q, pol, op, merged)
				return ""
			}
			return fmt.Sprintf("policy %q, operator policy %q, effective %v; computed %v, %v, effective %v",
				pol, op, eff, w[0], w[1], merged)
		})
	}
}

// A read of the policies the broker refuses (a user with the management tag and no permissions in
// the vhost: 401 on 3.10 and 4.0, 404 on 4.3, which the client tells from a missing vhost) says
// that the check could not run and what would let it; the plan itself goes on, and under
// policy_check = "error" it fails saying the same.
func TestAccPolicy_refusedReadSaysCheckCouldNotRun(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t)
	t.Parallel()
	ctx := context.Background()
	vhost := newVhost(t, "pol-refused")
	fatalOn(t, accAdmin(t).PutPolicy(t.Context(), vhost, brokertest.Policy{Name: "dead-ttl", Pattern: `\.dead$`,
		Definition: map[string]any{"message-ttl": 2000}}))
	user, password := uniqueName("noaccess"), "pw-"+uniqueName("p")
	a := accAdmin(t)
	if err := a.PutUser(ctx, user, password, "management"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.DeleteUser(context.Background(), user) })
	creds := fmt.Sprintf("  username = %q\n  password = %q\n", user, password)
	name := uniqueName("refused")

	out := newTerraformCLI(t, fmt.Sprintf(providerConfig, vhost, creds, queueBlock(name, ""))).mustRun("plan")
	wantSaid(t, "the plan", out, "Warning: Policy Check Could Not Run", fmt.Sprintf("of vhost %q could not be read", vhost),
		"management tag", "access to the vhost")
	if strings.Contains(out, "Breaks Queue") {
		t.Errorf("the plan judged policies it could not read:\n%s", out)
	}
	out, err := newTerraformCLI(t, fmt.Sprintf(providerConfig, vhost, creds+"  policy_check = \"error\"\n", queueBlock(name, ""))).run("plan")
	if err == nil {
		t.Errorf("policy_check = \"error\": the plan passed:\n%s", out)
	}
	wantSaid(t, "the plan under policy_check = \"error\"", out, "Error: Policy Check Could Not Run")
}

// A pattern that provider::queuey::policy_pattern_excluding turns to leave out a topology, put as
// a policy on each broker, applies to other queues and to none of the topology's queues (q, q.dead,
// a hold queue, the holding queue), by the broker's own answer.
func TestAccPolicy_exclusionPattern(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureFunctions)
	t.Parallel()
	vhost := newVhost(t, "pol-excl")
	name := uniqueName("orders-x")
	tf := newTerraformCLI(t, fmt.Sprintf(providerConfig, vhost, "", fmt.Sprintf("output \"pattern\" {\n  value = provider::queuey::policy_pattern_excluding(\".*\", [%q])\n}\n", name)))
	tf.mustRun("apply", "-auto-approve")
	pattern := tf.mustRun("output", "-raw", "pattern")
	if want, err := topology.ExcludeTopologies(".*", []string{name}, topology.DefaultSuffixes()); err != nil || pattern != want {
		t.Fatalf("the function gives %q, want %q (%v)", pattern, want, err)
	}
	fatalOn(t, accAdmin(t).PutPolicy(t.Context(), vhost, brokertest.Policy{Name: "everything-else", Pattern: pattern,
		Definition: map[string]any{"max-length": 1000}}))
	// Each queue and the policy it must get, by the broker's answer: first the others (a name that
	// starts like the topology's, one that holds it, and an unrelated one), so that once they show
	// the policy the broker has it in force, and a topology queue without it is left out, not late.
	want := [][2]string{{name + "-other", "everything-else"}, {"pre-" + name, "everything-else"}, {"unrelated", "everything-else"},
		{name, ""}, {name + ".dead", ""}, {topology.HoldQueueName(name, 5000, topology.DefaultSuffixes()), ""}, {topology.RedeclaringQueueName(name), ""}}
	for _, w := range want {
		declareIn(t, vhost, w[0], nil)
	}
	for _, w := range want {
		waitForPolicy(t, vhost, w[0], func(pol, _ string, _ map[string]any) string {
			if pol == w[1] {
				return ""
			}
			return fmt.Sprintf("policy %q, want %q", pol, w[1])
		})
	}
}

// A redrive into a q under a max-length (drop-head) policy is refused before anything moves:
// every dead letter is still on q.dead, q holds none.
func TestAccPolicy_redriveRefusedIntoMaxLength(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureActions)
	t.Parallel()
	vhost := newVhost(t, "pol-redrive")
	name := uniqueName("redrive")
	// The backend's q (message TTL 1 h) and q.dead, as the redrive tests declare them in "/".
	declareIn(t, vhost, name+".dead", nil)
	declareIn(t, vhost, name, map[string]any{"x-message-ttl": 3600000, "x-max-priority": 10})
	fatalOn(t, accAdmin(t).PutPolicy(t.Context(), vhost, brokertest.Policy{Name: "cap", Pattern: exactly(name), Definition: map[string]any{"max-length": 1}}))
	publishDead(t, amqpChannel(t, vhost), name, 5, nil)

	tf := newTerraformCLI(t, fmt.Sprintf(providerConfig, vhost, "", redriveBlock(name, "")))
	out, err := tf.run("apply", "-auto-approve", "-invoke=action.queuey_redrive_dead_letters.r")
	if err == nil {
		t.Errorf("the redrive into a q with max-length 1 passed:\n%s", out)
	}
	wantSaid(t, "the refused redrive", out, "Move Refused: A Policy Would Lose Messages", "Nothing was moved",
		`the policy "cap"`, "max-length = 1")
	if n := messagesIn(t, vhost, name+".dead"); n != 5 {
		t.Errorf("%s.dead holds %d messages after the refused redrive, want 5", name, n)
	}
	if n := messagesIn(t, vhost, name); n != 0 {
		t.Errorf("%s holds %d messages after the refused redrive, want 0", name, n)
	}
}

// A re-declaration that keeps q's messages, under a message-ttl policy on every name of the vhost
// (which would expire what waits in the holding queue), is refused with nothing changed: q keeps
// its messages and its arguments, and no holding queue is made.
func TestAccPolicy_redeclareRefusedUnderMessageTTL(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t)
	t.Parallel()
	const n = 20
	vhost := newVhost(t, "pol-redeclare")
	name := uniqueName("redeclare")
	keep := "  keep_messages_on_change = true\n"
	tf := newTerraformCLI(t, fmt.Sprintf(providerConfig, vhost, "", queueBlock(name, "  message_ttl = \"1h\"\n"+keep)))
	tf.mustRun("apply", "-auto-approve")
	publish(t, amqpChannel(t, vhost), name, n)
	// A day: above q's own TTL before and after the change, so that only the holding queue is at
	// risk, and the messages published before the policy stay anyway.
	fatalOn(t, accAdmin(t).PutPolicy(t.Context(), vhost, brokertest.Policy{Name: "day", Pattern: ".*", Definition: map[string]any{"message-ttl": 86400000}}))

	tf.writeConfig(fmt.Sprintf(providerConfig, vhost, "", queueBlock(name, "  message_ttl = \"2h\"\n"+keep)))
	out, err := tf.run("apply", "-auto-approve")
	if err == nil {
		t.Errorf("the re-declaration under a message-ttl policy passed:\n%s", out)
	}
	holding := topology.RedeclaringQueueName(name)
	wantSaid(t, "the refused re-declaration", out, "Move Refused: A Policy Would Lose Messages", "Nothing was moved",
		`the policy "day"`, "message-ttl = 86400000", holding+", the holding queue")
	if got := messagesIn(t, vhost, name); got != n {
		t.Errorf("%s holds %d messages after the refused change, want %d", name, got, n)
	}
	q, err := accClient(t).GetQueue(context.Background(), vhost, name, broker.Declared)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(q.Arguments["x-message-ttl"]); got != "3600000" {
		t.Errorf("%s has x-message-ttl %s after the refused change, want 3600000", name, got)
	}
	if queueExists(t, vhost, holding) {
		t.Errorf("the refused change made %s", holding)
	}
}
