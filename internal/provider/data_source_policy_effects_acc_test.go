package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// queuey_policy_effects on a real broker: for q, q.dead and an existing hold queue, the policy and
// operator policy that apply and each effect in a sentence, ok false; once the policies are gone,
// no effect and ok true.
func TestAccPolicy_dataSourceListsEffects(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t)
	t.Parallel()
	vhost := newVhost(t, "pol-ds")
	name := uniqueName("ds")
	declareIn(t, vhost, name, map[string]any{})
	declareIn(t, vhost, name+".dead", map[string]any{})
	// A long TTL: an unused hold queue expires after twice its TTL, which must not happen mid-test.
	hold := declareHoldIn(t, vhost, name, 3600000)
	fatalOn(t, accAdmin(t).PutPolicy(t.Context(), vhost, brokertest.Policy{Name: "limits", Pattern: ".*", Definition: map[string]any{"message-ttl": 2000}}))
	fatalOn(t, accAdmin(t).PutOperatorPolicy(t.Context(), vhost, brokertest.Policy{Name: "cap", Pattern: exactly(name),
		Definition: map[string]any{"max-length": 5}}))

	tf := newTerraformCLI(t, fmt.Sprintf(providerConfig, vhost, "  policy_check = \"off\"\n", fmt.Sprintf(`data "queuey_policy_effects" "e" {
  queue = %q
}

output "effects" {
  value = data.queuey_policy_effects.e
}
`, name)))
	got := policyEffectsOutput(t, tf)
	if got.OK {
		t.Errorf("ok is true under a message-ttl policy on every queue: %+v", got)
	}
	byName := map[string]policyEffectsRow{}
	for _, q := range got.Queues {
		byName[q.Name] = q
	}
	for queue, want := range map[string]struct{ role, policy, operator, effect string }{
		name:           {"main", "limits", "cap", `max-length = 5 (operator policy "cap")`},
		name + ".dead": {"dead", "limits", "", `message-ttl = 2000 (policy "limits"): expires messages on ` + name + `.dead after 2000 ms`},
		hold:           {"hold", "limits", "", `message-ttl = 2000 (policy "limits"): ends waits in ` + hold + ` after 2000 ms instead of 3600000 ms`},
	} {
		q, ok := byName[queue]
		switch {
		case !ok:
			t.Errorf("%s is not listed: %+v", queue, got.Queues)
		case q.Role != want.role || q.Policy != want.policy || q.OperatorPolicy != want.operator:
			t.Errorf("%s: role %q, policy %q, operator policy %q; want %q, %q, %q", queue, q.Role, q.Policy, q.OperatorPolicy,
				want.role, want.policy, want.operator)
		case !strings.Contains(strings.Join(q.Effects, "\n"), want.effect):
			t.Errorf("%s: effects %q lack %q", queue, q.Effects, want.effect)
		}
	}

	a := accAdmin(t)
	if err := a.DeletePolicy(context.Background(), vhost, "limits"); err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteOperatorPolicy(context.Background(), vhost, "cap"); err != nil {
		t.Fatal(err)
	}
	if got := policyEffectsOutput(t, tf); !got.OK || len(got.Queues) != 3 {
		t.Errorf("without policies: ok %v, %d queues, want ok and 3: %+v", got.OK, len(got.Queues), got.Queues)
	}
}

// policyEffects is the value of queuey_policy_effects as terraform output -json writes it.
type policyEffects struct {
	OK     bool               `json:"ok"`
	Queues []policyEffectsRow `json:"queues"`
}

// policyEffectsRow is one queue of queuey_policy_effects as terraform output -json writes it.
type policyEffectsRow struct {
	Name           string   `json:"name"`
	Role           string   `json:"role"`
	Policy         string   `json:"policy"`
	OperatorPolicy string   `json:"operator_policy"`
	Effects        []string `json:"effects"`
}

// policyEffectsOutput applies tf's configuration and reads its output "effects".
func policyEffectsOutput(t *testing.T, tf *terraformCLI) (effects policyEffects) {
	t.Helper()
	tf.mustRun("apply", "-auto-approve")
	if err := json.Unmarshal([]byte(tf.mustRun("output", "-json", "effects")), &effects); err != nil {
		t.Fatal(err)
	}
	return effects
}
