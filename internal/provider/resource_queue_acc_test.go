package provider

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/queuey/terraform-provider-queuey/internal/broker"
	amqp "github.com/rabbitmq/amqp091-go"
)

func queueConfig(name, extra string) string { return providerQueue("", name, extra) }

// providerQueue is a provider block with the lines of settings, and a queuey_queue "test" named name
// with the lines of extra.
func providerQueue(settings, name, extra string) string {
	return fmt.Sprintf("\nprovider \"queuey\" {\n%s\n}\n\nresource \"queuey_queue\" \"test\" {\n  name = %q\n%s\n}\n", settings, name, extra)
}

// checkBrokerQueue asserts that the broker holds queue name in vhost as the
// backend declares it (see declaredAs), with wantArgs, a JSON object with
// sorted keys, as its arguments.
func checkBrokerQueue(t *testing.T, vhost, name, wantArgs string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		q, err := accClient(t).GetQueue(context.Background(), vhost, name, broker.Declared)
		return cmp.Or(err, declaredAs(q, wantArgs))
	}
}

// checkGone asserts that none of the names exists in vhost any more.
func checkGone(t *testing.T, vhost string, names ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if i := slices.IndexFunc(names, func(n string) bool { return queueExists(t, vhost, n) }); i >= 0 {
			return fmt.Errorf("queue %q still exists in vhost %q", names[i], vhost)
		}
		return nil
	}
}

func TestAccQueue_basic(t *testing.T) {
	testAccPreCheck(t)
	name := uniqueName("basic")
	cleanupQueues(t, "/", name)
	resource.ParallelTest(t, queueCase(t, name, []resource.TestStep{
		{
			Config: queueConfig(name, `  message_ttl  = "24h"
  max_priority = 10`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("id"), knownvalue.StringExact("%2F/"+name)),
				statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("vhost"), knownvalue.StringExact("/")),
				statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("dead_queue"), knownvalue.StringExact(name+".dead")),
				statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("arguments_json"),
					knownvalue.StringExact(`{"x-max-priority":10,"x-message-ttl":86400000}`)),
				statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("hold_queue_prefix"), knownvalue.StringExact(name+".deferred.")),
				statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("hold_queue_pattern"),
					knownvalue.StringExact(`^`+regexp.QuoteMeta(name)+`\.deferred\.[0-9]+$`)),
				statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("queues_pattern"),
					knownvalue.StringExact(`^`+regexp.QuoteMeta(name)+`(\.dead|\.deferred\.[0-9]+)?$`)),
				statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("write_pattern"),
					knownvalue.StringExact(`^(amq\.default|`+regexp.QuoteMeta(name)+`(\.dead|\.deferred\.[0-9]+)?)$`)),
				statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("force_destroy"), knownvalue.Bool(false)),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				checkBrokerQueue(t, "/", name, `{"x-max-priority":10,"x-message-ttl":86400000}`),
				checkBrokerQueue(t, "/", name+".dead", `{}`),
			),
		},
		{
			// Same config again: nothing to do.
			Config: queueConfig(name, `  message_ttl  = "24h"
  max_priority = 10`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
		{
			ResourceName:      "queuey_queue.test",
			ImportState:       true,
			ImportStateId:     "%2F/" + name,
			ImportStateVerify: true,
		},
	}))
}

func TestAccQueue_changes(t *testing.T) {
	testAccPreCheck(t)
	name := uniqueName("changes")
	cleanupQueues(t, "/", name)
	resource.ParallelTest(t, queueCase(t, name, []resource.TestStep{
		{
			Config: queueConfig(name, `  message_ttl = "5s"`),
			Check:  checkBrokerQueue(t, "/", name, `{"x-message-ttl":5000}`),
		},
		{
			// The same duration spelt differently is no change.
			Config:           queueConfig(name, `  message_ttl = "5000ms"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
		{
			// A new TTL declares q again in place.
			Config: queueConfig(name, `  message_ttl = "10s"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionUpdate),
			}},
			Check: checkBrokerQueue(t, "/", name, `{"x-message-ttl":10000}`),
		},
		{
			Config: queueConfig(name, `  message_ttl  = "10s"
  max_priority = 5`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionUpdate),
			}},
			Check: checkBrokerQueue(t, "/", name, `{"x-max-priority":5,"x-message-ttl":10000}`),
		},
		{
			Config: queueConfig(name, `  message_ttl   = "10s"
  max_priority  = 5
  force_destroy = true`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionUpdate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("force_destroy"), knownvalue.Bool(true)),
			},
		},
		{
			// Dropping the TTL replaces too.
			Config: queueConfig(name, `  max_priority = 5`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionUpdate),
			}},
			Check: checkBrokerQueue(t, "/", name, `{"x-max-priority":5}`),
		},
	}))
}

func TestAccQueue_drift(t *testing.T) {
	testAccPreCheck(t)
	name := uniqueName("drift")
	cleanupQueues(t, "/", name)
	cfg := queueConfig(name, `  message_ttl = "5s"`)
	want := `{"x-message-ttl":5000}`
	c := accClient(t)
	ctx := context.Background()
	resource.ParallelTest(t, queueCase(t, name, []resource.TestStep{
		{Config: cfg},
		{
			// q.dead deleted out of band: declared again in place.
			PreConfig: func() { deleteOutOfBand(t, name+".dead") },
			Config:    cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionUpdate),
			}},
			Check: checkBrokerQueue(t, "/", name+".dead", `{}`),
		},
		{
			// q deleted out of band: created again.
			PreConfig: func() { deleteOutOfBand(t, name) },
			Config:    cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionCreate),
			}},
			Check: checkBrokerQueue(t, "/", name, want),
		},
		{
			// q redeclared out of band with another TTL: declared again in
			// place.
			PreConfig: func() {
				deleteOutOfBand(t, name)
				if err := c.DeclareQueue(ctx, "/", name, map[string]any{"x-message-ttl": 7000}); err != nil {
					t.Fatal(err)
				}
			},
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionUpdate),
				argumentsChange{`{"x-message-ttl":7000}`, `{"x-message-ttl":5000}`},
			}},
			Check: checkBrokerQueue(t, "/", name, want),
		},
		{
			// q redeclared out of band with an extra argument: declared
			// again in place.
			PreConfig: func() {
				deleteOutOfBand(t, name)
				if err := c.DeclareQueue(ctx, "/", name, map[string]any{"x-message-ttl": 5000, "x-max-length": 10}); err != nil {
					t.Fatal(err)
				}
			},
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionUpdate),
				argumentsChange{`{"x-max-length":10,"x-message-ttl":5000}`, `{"x-message-ttl":5000}`},
			}},
			Check: checkBrokerQueue(t, "/", name, want),
		},
		{
			// q redeclared out of band as auto-delete: the flag shows in
			// the plan's arguments_json, and q is declared again in place.
			PreConfig: func() {
				deleteOutOfBand(t, name)
				if _, err := amqpChannel(t, "/").QueueDeclare(name, true, true, false, false, amqp.Table{"x-message-ttl": int32(5000)}); err != nil {
					t.Fatal(err)
				}
			},
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionUpdate),
				argumentsChange{`{"auto_delete":true,"x-message-ttl":5000}`, `{"x-message-ttl":5000}`},
			}},
			Check: checkBrokerQueue(t, "/", name, want),
		},
		{
			// After the apply, state holds the computed table again.
			Config:           cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("arguments_json"), knownvalue.StringExact(`{"x-message-ttl":5000}`)),
			},
		},
	}))
}

func TestAccQueue_adoptAndConflict(t *testing.T) {
	testAccPreCheck(t)
	adopt, clash := uniqueName("adopt"), uniqueName("clash")
	cleanupQueues(t, "/", adopt)
	cleanupQueues(t, "/", clash)
	c := accClient(t)
	ctx := context.Background()
	// What an application would already have declared.
	for _, q := range []struct {
		name string
		args map[string]any
	}{
		{adopt, map[string]any{"x-message-ttl": 60000, "x-max-priority": 3}},
		{adopt + ".dead", map[string]any{}},
		{clash, map[string]any{"x-message-ttl": 1000, "x-max-length": 5}},
	} {
		if err := c.DeclareQueue(ctx, "/", q.name, q.args); err != nil {
			t.Fatal(err)
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: queueConfig(adopt, `  message_ttl  = "1m"
  max_priority = 3`),
				Check: checkBrokerQueue(t, "/", adopt, `{"x-max-priority":3,"x-message-ttl":60000}`),
			},
			{
				Config: queueConfig(clash, `  message_ttl = "2s"`),
				ExpectError: regexp.MustCompile(`(?s)Queue\s+Exists\s+With\s+Different\s+Settings.*x-max-length:\s+broker\s+has\s+5,\s+wanted\s+absent.*` +
					`x-message-ttl:\s+broker\s+has\s+1000,\s+wanted\s+2000.*Nothing\s+was\s+changed`),
				// No Check here: terraform-plugin-testing skips it after the
				// expected error; the assertions after the test cover it.
			},
		},
	})
	if q := getQueue(t, clash); fmt.Sprint(q.Arguments["x-message-ttl"]) != "1000" {
		t.Errorf("the conflicting queue was changed: %v", q.Arguments)
	}
	if queueExists(t, "/", clash+".dead") {
		t.Errorf("a refused create declared %s.dead", clash)
	}
}

func TestAccQueue_oddNamesAndImport(t *testing.T) {
	testAccPreCheck(t)
	vhost := uniqueName("team") + "/a b"
	name := uniqueName("odd") + " name@x"
	createVhost(t, vhost, "")
	cleanupQueues(t, vhost, name)
	cfg := fmt.Sprintf(`
provider "queuey" {}

resource "queuey_queue" "test" {
  name        = %q
  vhost       = %q
  message_ttl = "5000ms"
}
`, name, vhost)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, vhost, name, name+".dead"),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("id"), knownvalue.StringExact(queueID(vhost, name))),
				},
				Check: checkBrokerQueue(t, vhost, name, `{"x-message-ttl":5000}`),
			},
			{
				ResourceName:            "queuey_queue.test",
				ImportState:             true,
				ImportStateId:           queueID(vhost, name),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"message_ttl"}, // read back as "5s"; compared by value below
			},
			{
				// An import block, then a plan that must be empty although the
				// config spells the TTL "5000ms" and Read renders "5s".
				Config: cfg + fmt.Sprintf(`
import {
  to = queuey_queue.again
  id = %q
}

resource "queuey_queue" "again" {
  name        = %q
  vhost       = %q
  message_ttl = "5000ms"
}
`, queueID(vhost, name), name, vhost),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("queuey_queue.again", plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("queuey_queue.again", tfjsonpath.New("force_destroy"), knownvalue.Bool(false)),
				},
			},
			{
				// Forget the second address again without destroying the queue.
				Config: cfg + `
removed {
  from = queuey_queue.again
  lifecycle {
    destroy = false
  }
}
`,
			},
		},
	})
}

func TestAccQueue_vhostProblems(t *testing.T) {
	testAccPreCheck(t)
	quorum := uniqueName("quorum")
	createVhost(t, quorum, "quorum")
	missing := uniqueName("missing")
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      queueConfig("q", fmt.Sprintf("  vhost = %q", missing)),
				ExpectError: regexp.MustCompile(`vhost\s+"` + missing + `"\s+does\s+not\s+exist`),
			},
			{
				Config:      queueConfig("q", fmt.Sprintf("  vhost = %q", quorum)),
				ExpectError: regexp.MustCompile(`makes\s+quorum\s+queues\s+by\s+default`),
			},
		},
	})
	if queueExists(t, quorum, "q") || queueExists(t, quorum, "q.dead") {
		t.Error("a refused create declared a queue in the quorum vhost")
	}
}

func TestAccQueue_providerVhostChangeReplaces(t *testing.T) {
	testAccPreCheck(t)
	other := uniqueName("vh")
	createVhost(t, other, "")
	name := uniqueName("pvh")
	cleanupQueues(t, "/", name)
	cfg := func(vhost string) string {
		return fmt.Sprintf(`
provider "queuey" {
  vhost = %q
}

resource "queuey_queue" "test" {
  name = %q
}
`, vhost, name)
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, other, name, name+".dead"),
		Steps: []resource.TestStep{
			{
				Config: cfg("/"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("vhost"), knownvalue.StringExact("/")),
				},
			},
			{
				Config: cfg(other),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionReplace),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("vhost"), knownvalue.StringExact(other)),
					statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("id"), knownvalue.StringExact(other+"/"+name)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkGone(t, "/", name, name+".dead"),
					checkBrokerQueue(t, other, name, `{}`),
				),
			},
		},
	})
}

// Values known only at apply: an endpoint and a message TTL that come from
// another resource. Planning must neither fail nor promise an action that
// apply then has to change.
func TestAccQueue_valuesUnknownAtPlan(t *testing.T) {
	testAccPreCheck(t)
	name := uniqueName("unknown")
	cleanupQueues(t, "/", name)
	endpoint := os.Getenv(EnvEndpoint)
	cfg := func(ep, ttl string) string {
		return fmt.Sprintf(`
resource "terraform_data" "endpoint" {
  input = %q
}

resource "terraform_data" "ttl" {
  input = %q
}

provider "queuey" {
  endpoint = terraform_data.endpoint.output
}

resource "queuey_queue" "test" {
  name        = %q
  message_ttl = terraform_data.ttl.output
}
`, ep, ttl, name)
	}
	resource.ParallelTest(t, queueCase(t, name, []resource.TestStep{
		{
			Config: cfg(endpoint, "5s"),
			Check:  checkBrokerQueue(t, "/", name, `{"x-message-ttl":5000}`),
		},
		{
			// The endpoint changes spelling (a trailing slash), so it is
			// unknown while planning: the queue keeps its state.
			Config: cfg(strings.TrimRight(endpoint, "/")+"/", "5s"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionNoop),
			}},
		},
		{
			// The TTL is unknown while planning and turns out different:
			// planned as an update in place, applied as one (q declared
			// again).
			Config: cfg(strings.TrimRight(endpoint, "/")+"/", "6s"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionUpdate),
			}},
			Check: checkBrokerQueue(t, "/", name, `{"x-message-ttl":6000}`),
		},
	}))
}

// TestAccQueue_amqpDeclaredAdoptAndImport: queues an application declared
// over AMQP (RabbitMQ 3.13 and later report them with x-queue-type
// "classic" in their arguments) are adopted by a create and imported with
// empty plans after, and their x-queue-type is never drift.
func TestAccQueue_amqpDeclaredAdoptAndImport(t *testing.T) {
	testAccPreCheck(t)
	adopt, imported := uniqueName("amqp-adopt"), uniqueName("amqp-import")
	cleanupQueues(t, "/", adopt)
	cleanupQueues(t, "/", imported)
	// Declared as the application does, spelled out here.
	ch := amqpChannel(t, "/")
	for _, name := range []string{adopt, imported} {
		for q, args := range map[string]amqp.Table{name + ".dead": nil, name: {"x-message-ttl": int32(60000)}} {
			if _, err := ch.QueueDeclare(q, true, false, false, false, args); err != nil {
				t.Fatalf("declaring %s over AMQP: %v", q, err)
			}
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, "/", adopt, adopt+".dead", imported, imported+".dead"),
		Steps: []resource.TestStep{
			{
				Config: queueConfig(adopt, `  message_ttl = "1m"`),
				Check:  checkBrokerQueue(t, "/", adopt, `{"x-message-ttl":60000}`),
			},
			{
				Config: queueConfig(adopt, `  message_ttl = "1m"`) + fmt.Sprintf(`
import {
  to = queuey_queue.imported
  id = %q
}

resource "queuey_queue" "imported" {
  name        = %q
  message_ttl = "60s"
}
`, queueID("/", imported), imported),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("queuey_queue.imported", plancheck.ResourceActionNoop),
				}},
			},
		},
	})
}

// TestAccNodeQuorum_refused runs only against a node whose rabbitmq.conf
// sets default_queue_type = quorum (make test's node-quorum stage starts
// one): a vhost that sets no default queue type then makes quorum queues,
// and is refused with an error naming the setting; a vhost that sets classic
// works.
func TestAccNodeQuorum_refused(t *testing.T) {
	testAccPreCheck(t)
	got, err := accClient(t).NodeDefaultQueueType(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got != "quorum" {
		t.Skipf("the broker's default_queue_type is %q: this test needs a node with default_queue_type = quorum in rabbitmq.conf", got)
	}
	plain, classic := uniqueName("node-plain"), uniqueName("node-classic")
	createVhost(t, plain, "")
	createVhost(t, classic, "classic")
	name := uniqueName("nodeq")
	refused := regexp.MustCompile(`makes\s+quorum\s+queues\s+by\s+default[\s\S]*default_queue_type[\s\S]*rabbitmq\.conf`)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, classic, name, name+".dead"),
		Steps: []resource.TestStep{
			{Config: queueConfig(name, `  vhost = "/"`), ExpectError: refused},
			{Config: queueConfig(name, fmt.Sprintf("  vhost = %q", plain)), ExpectError: refused},
			{
				Config: queueConfig(name, fmt.Sprintf("  vhost = %q", classic)),
				Check:  checkBrokerQueue(t, classic, name, `{}`),
			},
		},
	})
	for _, vhost := range []string{"/", plain} {
		if queueExists(t, vhost, name) || queueExists(t, vhost, name+".dead") {
			t.Errorf("a refused create declared a queue in vhost %q", vhost)
		}
	}
}

// TestAccConcurrency_fiftyQueues applies and destroys 50 queuey_queue
// resources with a parallelism of 20: no error, an empty plan after the
// apply, and no queue left behind.
// The CLI runs through the harness, which passes -parallelism=20 itself:
// terraform-plugin-testing has no parallelism setting, and terraform-exec
// passes -parallelism=10 on every plan, apply and destroy.
func TestAccConcurrency_fiftyQueues(t *testing.T) {
	testAccPreCheck(t)
	const n, parallelism = 50, 20
	base := uniqueName("conc")
	cleanupQueues(t, "/", base+"-")
	// Through a proxy that holds every request 100ms, so that the operations
	// Terraform runs at once overlap at the broker and the proxy can count
	// the requests in flight.
	p := newFaultProxy(t, nil)
	p.SetDelay(100 * time.Millisecond)
	p.Set(always(slow))
	tf := newTerraformCLI(t, requiredQueuey+proxiedQueuesConfig(p.URL, `  request_timeout = "10s"`, base, n, `  max_priority = 2`))
	tf.mustRun("apply", "-auto-approve", fmt.Sprintf("-parallelism=%d", parallelism))
	// What was applied at once plans empty: with -detailed-exitcode a plan
	// with changes exits 2, which fails the run.
	tf.mustRun("plan", "-detailed-exitcode", fmt.Sprintf("-parallelism=%d", parallelism))
	if got := strings.Count(tf.mustRun("state", "list"), "queuey_queue.q["); got != n {
		t.Errorf("state holds %d queuey_queue.q, want %d", got, n)
	}
	all, err := listQueues(accClient(t), "/", broker.Counted)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		q := fmt.Sprintf("%s-%d", base, i)
		if err := declaredAs(all[q], `{"x-max-priority":2}`); all[q].Name == "" || err != nil || all[q+".dead"].Name == "" {
			t.Errorf("queue %s or its dead queue missing or declared otherwise (%v)", q, err)
		}
	}
	// Each of the 20 operations at a time has a request in flight (nothing
	// serialises them), and none has more than its vhost check and the
	// look-ups of its three queues: q, q.dead and the holding queue of an
	// interrupted change (nothing fans out per queue).
	seen := p.Seen()
	inflight := seen.MaxInflight
	t.Logf("fault proxy (slow): %s, at most %d in flight at once", seen, inflight)
	if inflight < parallelism || inflight > 4*parallelism {
		t.Errorf("at most %d requests were in flight at once; want from %d (one per operation) to %d", inflight, parallelism, 4*parallelism)
	}
	tf.mustRun("destroy", "-auto-approve", fmt.Sprintf("-parallelism=%d", parallelism))
	if left, err := queuesWithPrefix(accClient(t), "/", base+"-"); err != nil || len(left) > 0 {
		t.Errorf("%d of %d queues left after destroy (%v): %s", len(left), 2*n, err, strings.Join(left, ", "))
	}
}

func TestAccCLI_importCommand(t *testing.T) {
	testAccPreCheck(t)
	t.Parallel()
	name := uniqueName("cliimport")
	cleanupQueues(t, "/", name)
	// The queues exist already, declared as an application would.
	c := accClient(t)
	for q, args := range map[string]map[string]any{
		name:           {"x-message-ttl": 5000, "x-max-priority": 10},
		name + ".dead": {},
	} {
		if err := c.DeclareQueue(context.Background(), "/", q, args); err != nil {
			t.Fatal(err)
		}
	}
	tf := newTerraformCLI(t, e2eConfig(name))
	out := tf.mustRun("import", "queuey_queue.test", "%2F/"+name)
	if !strings.Contains(out, "Import successful") {
		t.Fatalf("import output:\n%s", out)
	}
	// The config spells the TTL "5000ms", Read renders "5s": still no change.
	out = tf.mustRun("plan", "-detailed-exitcode")
	if !strings.Contains(out, "No changes.") {
		t.Fatalf("plan after import is not empty:\n%s", out)
	}
	out = tf.mustRun("state", "show", "queuey_queue.test")
	for _, want := range []string{`force_destroy = false`, `keep_messages_on_change = false`, `id = "%2F/` + name + `"`} {
		if !saysWords(out, want) {
			t.Errorf("state after import lacks %s:\n%s", want, out)
		}
	}
	tf.mustRun("destroy", "-auto-approve")
	if queueExists(t, "/", name) || queueExists(t, "/", name+".dead") {
		t.Fatal("destroy left queues behind")
	}
}
