package provider

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// A plan of queuey_queue warns of each policy that breaks one of its queues, naming the policy,
// the key and value, what it does and the fix; policy_check = "error" makes the same a plan error,
// nothing declared; "off" says nothing; a harmless key says nothing.
func TestQueuePlan_policyCheck(t *testing.T) {
	s := brokertest.New(t)
	s.SetPolicy("/", brokertest.Policy{Name: "limits", Pattern: `\.dead$`, Priority: 1,
		Definition: map[string]any{"message-ttl": 2000}})
	s.SetPolicy("/", brokertest.Policy{Name: "version", Pattern: ".*", Definition: map[string]any{"queue-version": 2}})
	out := newTerraformCLI(t, requiredQueuey+fakeProviderConfig(s, "")).mustRun("plan")
	for _, want := range []string{
		`Warning: Policy "limits" Breaks Queue orders.dead`,
		`message-ttl = 2000: expires messages on orders.dead after 2000 ms`,
		`provider::queuey::policy_pattern_excluding`,
	} {
		if !strings.Contains(flatten(out), want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"version"`) {
		t.Errorf("the plan names the harmless policy:\n%s", out)
	}
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      fakeProviderConfig(s, "", `policy_check = "error"`),
			ExpectError: regexp.MustCompile(`Policy\s+"limits"\s+Breaks\s+Queue\s+orders.dead`),
		}},
	})
	if _, ok := s.Queue("/", "orders.dead"); ok {
		t.Error(`policy_check = "error" declared orders.dead`)
	}
	off := newTerraformCLI(t, requiredQueuey+fakeProviderConfig(s, "", `policy_check = "off"`))
	if out := off.mustRun("plan"); strings.Contains(out, "Breaks Queue") {
		t.Errorf("policy_check = \"off\" warned:\n%s", out)
	}
}

// requiredQueuey points a configuration run by newTerraformCLI at the provider under test.
const requiredQueuey = "terraform {\n  required_providers {\n    queuey = { source = \"queuey/queuey\" }\n  }\n}\n"

// flatten joins Terraform's wrapped lines, so a phrase matches across a line break.
func flatten(out string) string {
	return strings.Join(strings.Fields(out), " ")
}

// Which policies apply is picked as the broker's version picks them: a policy with
// max-in-memory-length applies to classic queues on 3.10 (so its message-ttl breaks q.dead) and
// on no classic queue from 3.13 on.
func TestPolicyFindings_brokerVersion(t *testing.T) {
	for v, want := range map[brokertest.Version]int{brokertest.V310: 1, brokertest.V43: 0} {
		s := brokertest.New(t)
		s.AnswerAs(v)
		s.SetPolicy("/", brokertest.Policy{Name: "mem", Pattern: `\.dead$`,
			Definition: map[string]any{"max-in-memory-length": 100, "message-ttl": 2000}})
		f, err := readPolicyFindings(context.Background(), fakeBrokerClient(t, s), "/", "orders", topology.DefaultSuffixes(), map[string]any{}, false)
		if err != nil || len(f.effects) != want {
			t.Errorf("%s: %d effects (%v), want %d", v, len(f.effects), err, want)
		}
	}
}
