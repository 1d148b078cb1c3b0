package provider

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Identity: every Create, Read and Update sets it, and an import block with
// the identity of the queue created brings it back with an empty plan.
func TestAccIdentity_setAndImportBlock(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureIdentity)
	name := uniqueName("ident")
	cleanupQueues(t, "/", name)
	resource.ParallelTest(t, resource.TestCase{
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
				// terraform-plugin-testing writes an import-block step's config as
				// it is, without the required_providers block it adds elsewhere: the
				// source as it serves the provider, TF_ACC_PROVIDER_NAMESPACE (tools/acc
				// sets "queuey"), else "hashicorp".
				Config: strings.Replace(requiredQueuey, `"queuey/`, `"`+cmp.Or(os.Getenv("TF_ACC_PROVIDER_NAMESPACE"), "hashicorp")+"/", 1) +
					queueConfig(name, `  message_ttl = "5000ms"`),
				ResourceName:    "queuey_queue.test",
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithResourceIdentity,
				// The config spells the TTL "5000ms"; Read renders "5s": equal by value, no change planned.
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionNoop),
				}},
			},
			{
				// An in-place update (force_destroy) keeps the identity.
				Config: queueConfig(name, `  message_ttl = "5000ms"
  force_destroy = true`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentity("queuey_queue.test", map[string]knownvalue.Check{
						"name":  knownvalue.StringExact(name),
						"vhost": knownvalue.StringExact("/"),
					}),
				},
			},
		},
	})
}

// A queue the application declared is imported with an identity that gives
// only its name: the vhost is the provider's, and the plan after is empty.
func TestAccIdentity_importExistingQueueByName(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureIdentity)
	name := uniqueName("identimp")
	cleanupQueues(t, "/", name)
	ch := amqpChannel(t, "/")
	for q, args := range map[string]amqp.Table{name: {"x-max-priority": int32(5)}, name + ".dead": nil} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, args); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, amqpChannel(t, "/"), name, 2)
	config := queueConfig(name, "  max_priority = 5") + fmt.Sprintf(`
import {
  to       = queuey_queue.test
  identity = { name = %q }
}
`, name)
	resource.ParallelTest(t, resource.TestCase{
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
					if n := messagesIn(t, "/", name); n != 2 {
						return fmt.Errorf("queue %q holds %d messages after the import, want the 2 published", name, n)
					}
					return nil
				},
			},
			{
				Config:   config,
				PlanOnly: true,
				// Drained afterwards, so that the test's destroy may delete the queues.
				PreConfig: func() {
					if _, err := ch.QueuePurge(name, false); err != nil {
						t.Fatal(err)
					}
				},
			},
		},
	})
}

// An identity that names no queue this resource can manage is refused before
// anything is read, naming the attribute and the rule.
func TestAccIdentity_importRefusesInvalidName(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureIdentity)
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
		ProtoV6ProviderFactories: testProviderFactories,
		Steps:                    steps,
	})
	if queueExists(t, "/", name) {
		t.Errorf("queue %q was created by a refused import", name)
	}
}

// State written before identities existed (by an older CLI or provider) has
// none: a plan finds nothing to change, a refresh adds the identity, and an
// update planned with -refresh=false, whose prior identity is null, sets it.
func TestAccIdentity_stateWrittenWithoutIdentity(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureIdentity)
	t.Parallel()
	name := uniqueName("identold")
	cleanupQueues(t, "/", name)
	tf := newTerraformCLI(t, e2eConfig(name))
	tf.mustRun("apply", "-auto-approve")
	// The state as a CLI or provider without identity support writes it: each identity goes with
	// the comma before it, so the JSON stays valid whether the field was last in its object or
	// not; an identity is a flat object of strings.
	path := filepath.Join(tf.dir, "terraform.tfstate")
	state, err := os.ReadFile(path)
	state = regexp.MustCompile(`,\s*"identity(_schema_version)?":\s*(\d+|\{[^{}]*\})`).ReplaceAll(state, nil)
	if err == nil {
		err = os.WriteFile(path, state, 0o600)
	}
	if err != nil || !json.Valid(state) || strings.Contains(string(state), `"identity`) {
		t.Fatalf("writing the state without its identities (%v):\n%s", err, state)
	}

	if out := tf.mustRun("plan", "-refresh=false", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Fatalf("plan of state without identity is not empty:\n%s", out)
	}
	config := strings.Replace(e2eConfig(name), "max_priority = 10", "max_priority = 10\n  force_destroy = true", 1)
	tf.writeConfig(config)
	out := tf.mustRun("apply", "-auto-approve", "-refresh=false")
	if !strings.Contains(out, "0 added, 1 changed, 0 destroyed") {
		t.Fatalf("update of state without identity:\n%s", out)
	}
	checkStateIdentity(t, tf, name)
	tf.mustRun("destroy", "-auto-approve")
}

// checkStateIdentity fails unless the state tf wrote records the identity of queue name in vhost
// "/", and only those two attributes. A CLI without resource identity (before Terraform and
// OpenTofu 1.12) records none: there it says so and checks nothing. Callers run needsCLI first.
func checkStateIdentity(t *testing.T, tf *terraformCLI, name string) {
	t.Helper()
	// Its error, cached, failed the test already: each caller ran needsCLI first.
	cli, _ := cliUnderTest()
	if cli.lacks(featureIdentity) {
		t.Logf("%s %s has no resource identity: not checked", cli.kind, cli.version)
		return
	}
	state, err := os.ReadFile(filepath.Join(tf.dir, "terraform.tfstate"))
	if err != nil || !regexp.MustCompile(`"identity":\s*\{\s*"name":\s*"`+regexp.QuoteMeta(name)+`",\s*"vhost":\s*"/"\s*\}`).Match(state) {
		t.Errorf("the state records no identity {name %s, vhost /} (%v):\n%s", name, err, state)
	}
}
