package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Identity: every Create, Read and Update sets it, and an import block with
// the identity of the queue created brings it back with an empty plan.
func TestAccIdentity_setAndImportBlock(t *testing.T) {
	testAccPreCheck(t)
	name := uniqueName("ident")
	cleanupQueues(t, "/", name)
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: queueConfig(name, `  message_ttl = "5000ms"`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentity("queuey_queue.test", map[string]knownvalue.Check{
						"name":  knownvalue.StringExact(name),
						"vhost": knownvalue.StringExact("/"),
					}),
				},
			},
			{
				// An in-place update (force_destroy) keeps the identity.
				Config: queueConfig(name, `  message_ttl = "5000ms"
  force_destroy = true`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentityValue("queuey_queue.test", tfjsonpath.New("name"), knownvalue.StringExact(name)),
				},
			},
			{
				ResourceName:    "queuey_queue.test",
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithResourceIdentity,
				// The config spells the TTL "5000ms"; Read renders "5s": equal by value, no change planned.
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionNoop),
				}},
			},
		},
	})
}

// A queue the application declared is imported with an identity that gives
// only its name: the vhost is the provider's, and the plan after is empty.
func TestAccIdentity_importExistingQueueByName(t *testing.T) {
	testAccPreCheck(t)
	name := uniqueName("identimp")
	cleanupQueues(t, "/", name)
	ch := amqpChannel(t, "/")
	for q, args := range map[string]amqp.Table{name: {"x-max-priority": int32(5)}, name + ".dead": nil} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, args); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, name, 2)
	config := queueConfig(name, "  max_priority = 5") + fmt.Sprintf(`
import {
  to       = queuey_queue.test
  identity = { name = %q }
}
`, name)
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("id"), knownvalue.StringExact("%2F/"+name)),
					statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("force_destroy"), knownvalue.Bool(false)),
					statecheck.ExpectIdentity("queuey_queue.test", map[string]knownvalue.Check{
						"name":  knownvalue.StringExact(name),
						"vhost": knownvalue.StringExact("/"),
					}),
				},
				Check: func(_ *terraform.State) error {
					if n := messageCount(t, name); n != 2 {
						return fmt.Errorf("queue %q holds %d messages after the import, want the 2 published", name, n)
					}
					return nil
				},
			},
			{
				Config:   config,
				PlanOnly: true,
			},
		},
	})
}

// An identity that names no queue this resource can manage is refused before
// anything is read, naming the attribute and the rule.
func TestAccIdentity_importRefusesInvalidName(t *testing.T) {
	testAccPreCheck(t)
	name := uniqueName("identbad")
	steps := make([]resource.TestStep, 0, 2)
	for bad, want := range map[string]string{"amq.orders": `starts\s+with\s+"amq\."`, "": `must\s+not\s+be\s+empty`} {
		steps = append(steps, resource.TestStep{
			Config: queueConfig(name, "") + fmt.Sprintf(`
import {
  to       = queuey_queue.test
  identity = { name = %q }
}
`, bad),
			ExpectError: regexp.MustCompile(`(?s)Invalid Import Identity.*identity attribute\s+` + "`name`" + `.*` + want),
		})
	}
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: testProviderFactories,
		Steps:                    steps,
	})
	if queueExists(t, "/", name) {
		t.Errorf("queue %q was created by a refused import", name)
	}
}
