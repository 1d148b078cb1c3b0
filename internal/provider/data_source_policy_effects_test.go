package provider

import (
	"cmp"
	"fmt"
	"strings"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// policyEffectsOnFake returns what the data source reports for queue orders in vhost of the fake, one
// line per queue ("name role policy/operator_policy definition" then "  - effect" lines), then
// "ok" or "not ok"; or its diagnostics (diagText) when there is an error.
func policyEffectsOnFake(t *testing.T, fake *brokertest.Server, vhost string) string {
	t.Helper()
	f, diags := (&policyEffectsDataSource{configuredDataSource{data: fakeData(t, fake.URL)}}).findings(t.Context(), vhost, "orders")
	list, ok, more := policyEffectsValues(t.Context(), f)
	var queues []policyEffectsQueueModel
	if diags.Append(append(more, list.ElementsAs(t.Context(), &queues, false)...)...); diags.HasError() {
		return diagText(diags)
	}
	var b strings.Builder
	for _, q := range queues {
		fmt.Fprintf(&b, "%s %s %s/%s %s\n", q.Name.ValueString(), q.Role.ValueString(), cmp.Or(q.Policy.ValueString(), "-"),
			cmp.Or(q.OperatorPolicy.ValueString(), "-"), q.EffectiveDefinitionJSON.ValueString())
		for _, e := range q.Effects {
			b.WriteString("  - " + e + "\n")
		}
	}
	return b.String() + map[bool]string{false: "not "}[ok] + "ok"
}

// Each queue of the topology that exists (q, q.dead, the hold queues by TTL, the holding queue),
// with the policy and operator policy that apply, what it runs with, and each effect in words.
func TestPolicyEffectsDataSource_effects(t *testing.T) {
	t.Parallel()
	fake := brokertest.New(t)
	fake.PutQueue("/", brokertest.Queue{Name: "orders", Durable: true, Arguments: map[string]any{"x-message-ttl": 60000}})
	putIdle(fake, "orders.dead", "orders.redeclaring", "orders.deferred.x", "other")
	for _, ttl := range []int64{30000, 1000} {
		args, _ := topology.HoldQueueArgs("orders", ttl)
		fake.PutQueue("/", brokertest.Queue{Name: topology.HoldQueueName("orders", ttl, topology.DefaultSuffixes()), Durable: true, Arguments: args.Map()})
	}
	fake.SetPolicy("/", brokertest.Policy{Name: "limits", Pattern: `\.dead$`, Priority: 1, Definition: map[string]any{"message-ttl": 2000}})
	fake.SetPolicy("/", brokertest.Policy{Name: "version", Pattern: ".*", Definition: map[string]any{"queue-version": 2}})
	fake.SetOperatorPolicy("/", brokertest.Policy{Name: "ops", Pattern: `deferred\.1000$`, Definition: map[string]any{"max-length": 3}})
	got := policyEffectsOnFake(t, fake, "/")
	want := `orders main version/- {"message-ttl":60000,"queue-version":2}
orders.dead dead limits/- {"message-ttl":2000}
  - message-ttl = 2000 (policy "limits"): expires messages on orders.dead after 2000 ms: they are lost before anyone consumes or moves them
orders.deferred.1000 hold version/ops {"dead-letter-exchange":"","dead-letter-routing-key":"orders","expires":2000,"max-length":3,"message-ttl":1000,"queue-version":2}
  - max-length = 3 (operator policy "ops"): limits orders.deferred.1000 to 3 messages and then sends the oldest waits back to their queue early (drop-head)
orders.deferred.30000 hold version/- {"dead-letter-exchange":"","dead-letter-routing-key":"orders","expires":60000,"message-ttl":30000,"queue-version":2}
orders.redeclaring holding version/- {"queue-version":2}
not ok`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// Without the breaking policies the contract holds: ok, no effects.
	fake.RemovePolicy("/", "limits")
	fake.RemoveOperatorPolicy("/", "ops")
	if got := policyEffectsOnFake(t, fake, "/"); !strings.HasSuffix(got, "\nok") || strings.Contains(got, "  - ") {
		t.Errorf("with only a harmless policy:\n%s", got)
	}
}

// q that does not exist yet is checked without arguments (any message-ttl breaks it), and with
// nothing applying its definition is {}; a tie names each tied policy that breaks; a pattern the
// provider cannot evaluate is an effect, never taken for "no match".
func TestPolicyEffectsDataSource_tiesAndUnevaluable(t *testing.T) {
	t.Parallel()
	fake := brokertest.New(t)
	fake.SetPolicy("/", brokertest.Policy{Name: "a", Pattern: `^orders$`, Priority: 5, Definition: map[string]any{"queue-mode": "lazy"}})
	fake.SetPolicy("/", brokertest.Policy{Name: "b", Pattern: `^orders$`, Priority: 5, Definition: map[string]any{"message-ttl": 100}})
	fake.SetPolicy("/", brokertest.Policy{Name: "odd", Pattern: `\h\.dead`, Priority: 9, Definition: map[string]any{"expires": 1000}})
	got := policyEffectsOnFake(t, fake, "/")
	want := `orders main a/- {"queue-mode":"lazy"}
  - message-ttl = 100 (policy "b", tied in priority with "a": RabbitMQ applies either): expires messages on orders after 100 ms, before a worker takes them: they are lost
  - the pattern "\\h\\.dead" of policy "odd" cannot be evaluated: the PCRE escape \h has no equal in the engine: whether it applies to orders, and what it does there, is unknown
orders.dead dead -/- {}
  - the pattern "\\h\\.dead" of policy "odd" cannot be evaluated: the PCRE escape \h has no equal in the engine: whether it applies to orders.dead, and what it does there, is unknown
not ok`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A vhost that does not exist, and a read of the policies refused in whole or in part, are errors
// that say so and what permission lets the read run.
func TestPolicyEffectsDataSource_errors(t *testing.T) {
	t.Parallel()
	fake := brokertest.New(t)
	if got := policyEffectsOnFake(t, fake, "nope"); !strings.HasPrefix(got, `Error: Vhost Not Found: vhost "nope" does not exist`) {
		t.Errorf("a missing vhost: %s", got)
	}
	for _, path := range []string{"operator-policies/%2F", "policies/%2F"} {
		fake := brokertest.New(t)
		fake.Script(brokertest.Path(path), brokertest.Reply(403, `{"error":"forbidden","reason":"Access refused."}`))
		got := policyEffectsOnFake(t, fake, "/")
		for _, want := range []string{"Not Authorized By The Management API: ", `The policies and operator policies of vhost "/" could not be read`, "management tag", "rabbitmq.tag:management"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s refused: %q lacks %q", path, got, want)
			}
		}
	}
}

// The example, planned by the CLI against the fake: its check block warns with each effect, and
// its output lists them by queue; without the policy the check passes.
func TestPolicyEffectsDataSource_Example(t *testing.T) {
	fake := brokertest.New(t)
	putIdle(fake, "orders", "orders.dead")
	fake.SetPolicy("/", brokertest.Policy{Name: "limits", Pattern: `\.dead$`, Definition: map[string]any{"max-length": 3}})
	config := requiredQueuey + fmt.Sprintf("provider \"queuey\" {\n  endpoint = %q\n  username = \"u\"\n  password = \"p\"\n}\n", fake.URL) +
		readRepoFile(t, "examples/data-sources/queuey_policy_effects/data-source.tf")
	cli := newTerraformCLI(t, config)
	out := flatten(cli.mustRun("plan"))
	for _, want := range []string{
		`Warning: Check block assertion failed`,
		`max-length = 3 (policy "limits"): limits orders.dead to 3 messages and then drops the oldest messages: they are lost (drop-head)`,
		`orders_policy_effects = { + "orders.dead" = [`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
	fake.RemovePolicy("/", "limits")
	if out := cli.mustRun("plan"); strings.Contains(out, "Check block assertion failed") {
		t.Errorf("the check failed without a breaking policy:\n%s", out)
	}
}
