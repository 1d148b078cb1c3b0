package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// queuey_policy_effects on a real broker: for q, q.dead and an existing hold queue, in that order,
// the policy and operator policy that apply and each effect in a sentence, ok false; once the
// policies are gone, no effect and ok true.
func TestAccPolicy_dataSourceListsEffects(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t)
	vhost := policyVhost(t, "pol-ds")
	name := uniqueName("ds")
	declareIn(t, vhost, name, map[string]any{})
	declareIn(t, vhost, name+".dead", map[string]any{})
	hold := declareHoldIn(t, vhost, name, 30000)
	putPolicy(t, vhost, brokertest.Policy{Name: "limits", Pattern: ".*", Definition: map[string]any{"message-ttl": 2000}}, false)
	putPolicy(t, vhost, brokertest.Policy{Name: "cap", Pattern: exactly(name), Definition: map[string]any{"max-length": 5}}, true)

	// One queue of the list: its name, role and policies (null for none), and an effect among others.
	row := func(queue, role string, operator knownvalue.Check, effect string) knownvalue.Check {
		return knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"name": knownvalue.StringExact(queue), "role": knownvalue.StringExact(role),
			"policy": knownvalue.StringExact("limits"), "operator_policy": operator,
			// SetPartial takes the list as it comes: some sentence, whichever its place, holds effect.
			"effects": knownvalue.SetPartial([]knownvalue.Check{knownvalue.StringRegexp(regexp.MustCompile(regexp.QuoteMeta(effect)))}),
		})
	}
	effects := func(path string, want knownvalue.Check) statecheck.StateCheck {
		return statecheck.ExpectKnownValue("data.queuey_policy_effects.e", tfjsonpath.New(path), want)
	}
	config := fmt.Sprintf(`provider "queuey" {
  vhost        = %q
  policy_check = "off"
}

data "queuey_policy_effects" "e" {
  queue = %q
}
`, vhost, name)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					effects("ok", knownvalue.Bool(false)),
					effects("queues", knownvalue.ListExact([]knownvalue.Check{
						row(name, "main", knownvalue.StringExact("cap"), `max-length = 5 (operator policy "cap")`),
						row(name+".dead", "dead", knownvalue.Null(),
							`message-ttl = 2000 (policy "limits"): expires messages on `+name+`.dead after 2000 ms`),
						row(hold, "hold", knownvalue.Null(),
							`message-ttl = 2000 (policy "limits"): ends waits in `+hold+` after 2000 ms instead of 30000 ms`),
					})),
				},
			},
			{
				PreConfig: func() {
					a := accAdmin(t)
					if err := a.DeletePolicy(t.Context(), vhost, "limits"); err != nil {
						t.Fatal(err)
					}
					if err := a.DeleteOperatorPolicy(t.Context(), vhost, "cap"); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					effects("ok", knownvalue.Bool(true)),
					effects("queues", knownvalue.ListSizeExact(3)),
				},
			},
		},
	})
}
