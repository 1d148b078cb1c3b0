package provider

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
)

// listVhost makes a vhost holding what applications leave on a broker: two
// logical queues as the backend declares them (one with a hold queue), a
// near miss with an argument the backend never declares, and a queue with
// no dead-letter sibling.
func listVhost(t *testing.T) string {
	t.Helper()
	vhost := newVhost(t, "list")
	// Declared over AMQP, with 32-bit integers, as applications leave them.
	ch := amqpChannel(t, vhost)
	for name, args := range map[string]amqp.Table{
		"orders": {"x-message-ttl": int32(86400000), "x-max-priority": int32(10)}, "orders.dead": nil,
		// A TTL long enough that the hold queue outlives the test: an idle one
		// deletes itself 2*TTL after its declaration.
		"orders.deferred.3600000": {"x-message-ttl": int32(3600000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders", "x-expires": int32(7200000)},
		"plain":                   nil, "plain.dead": nil, "odd": {"x-max-length": int32(10)}, "odd.dead": nil, "lonely": nil,
	} {
		if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
			t.Fatalf("declaring %q: %v", name, err)
		}
	}
	return vhost
}

// listQueries are the list blocks of the query step, in the vhost %[1]q. The provider
// block comes from the step before: terraform-plugin-testing keeps the configuration next to the
// .tfquery.hcl file it writes.
const listQueries = `
list "queuey_queue" "all" {
  provider         = queuey
  include_resource = true
  config {
    vhost = %[1]q
  }
}

list "queuey_queue" "filtered" {
  provider = queuey
  config {
    vhost      = %[1]q
    name_regex = "^pl"
  }
}

list "queuey_queue" "limited" {
  provider = queuey
  limit    = 1
  config {
    vhost = %[1]q
  }
}
`

func TestAccQueueList_query(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureQuery)
	vhost := listVhost(t)
	identity := func(name string) map[string]knownvalue.Check {
		return map[string]knownvalue.Check{"name": knownvalue.StringExact(name), "vhost": knownvalue.StringExact(vhost)}
	}
	orders := queryfilter.ByResourceIdentity(identity("orders"))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: `provider "queuey" {}`},
			{
				Query:  true,
				Config: fmt.Sprintf(listQueries, vhost),
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength("queuey_queue.all", 2),
					querycheck.ExpectIdentity("queuey_queue.all", identity("orders")),
					querycheck.ExpectIdentity("queuey_queue.all", identity("plain")),
					querycheck.ExpectNoIdentity("queuey_queue.all", identity("odd")),
					querycheck.ExpectNoIdentity("queuey_queue.all", identity("orders.dead")),
					querycheck.ExpectResourceDisplayName("queuey_queue.all", orders,
						knownvalue.StringExact(fmt.Sprintf("orders (vhost %s)", vhost))),
					querycheck.ExpectResourceKnownValues("queuey_queue.all", orders, []querycheck.KnownValueCheck{
						{Path: tfjsonpath.New("id"), KnownValue: knownvalue.StringExact(queueID(vhost, "orders"))},
						{Path: tfjsonpath.New("message_ttl"), KnownValue: knownvalue.StringExact("24h")},
						{Path: tfjsonpath.New("max_priority"), KnownValue: knownvalue.Int64Exact(10)},
						{Path: tfjsonpath.New("force_destroy"), KnownValue: knownvalue.Bool(false)},
						{Path: tfjsonpath.New("dead_queue"), KnownValue: knownvalue.StringExact("orders.dead")},
						{Path: tfjsonpath.New("arguments_json"), KnownValue: knownvalue.StringExact(`{"x-max-priority":10,"x-message-ttl":86400000}`)},
					}),
					querycheck.ExpectLength("queuey_queue.filtered", 1),
					querycheck.ExpectIdentity("queuey_queue.filtered", identity("plain")),
					querycheck.ExpectLength("queuey_queue.limited", 1),
					querycheck.ExpectIdentity("queuey_queue.limited", identity("orders")),
				},
			},
		},
	})
}

func TestAccQueueList_badInput(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureQuery)
	vhost := uniqueName("listbad")
	list := func(config string) string {
		return fmt.Sprintf(`
list "queuey_queue" "x" {
  provider = queuey
  config {
%s
  }
}
`, config)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: `provider "queuey" {}`},
			{
				Query:       true,
				Config:      list(`    name_regex = "orders("`),
				ExpectError: regexp.MustCompile(`(?s)Invalid Regular Expression.*name_regex\s+must\s+be\s+a\s+regular\s+expression`),
			},
			{
				Query:       true,
				Config:      list(fmt.Sprintf("    vhost = %q", vhost)),
				ExpectError: regexp.MustCompile(`(?s)vhost\s+"` + regexp.QuoteMeta(vhost) + `"\s+does\s+not\s+exist`),
			},
		},
	})
}

// terraform query -generate-config-out writes a resource and an import block
// per logical queue; planning that file imports them all and changes nothing,
// and applying it leaves the broker and its messages as they were.
func TestAccQuery_generateConfigOut(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureQuery)
	t.Parallel()
	vhost := listVhost(t)
	publish(t, amqpChannel(t, vhost), "orders", 3)
	tf := newTerraformCLI(t, `terraform {
  required_providers {
    queuey = { source = "queuey/queuey" }
  }
}

provider "queuey" {}
`)
	query := fmt.Sprintf(`list "queuey_queue" "all" {
  provider = queuey
  limit    = 1000
  config {
    vhost = %q
  }
}
`, vhost)
	if err := os.WriteFile(filepath.Join(tf.dir, "queues.tfquery.hcl"), []byte(query), 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := listQueues(accClient(t), vhost, broker.Declared)
	if err != nil {
		t.Fatal(err)
	}

	out := tf.mustRun("query", "-generate-config-out=generated.tf")
	if !regexp.MustCompile(`(?s)Queues Not Listed.*odd: x-max-length is not declared by the backend`).MatchString(out) {
		t.Errorf("query output lacks the near-miss warning:\n%s", out)
	}
	generated, err := os.ReadFile(filepath.Join(tf.dir, "generated.tf"))
	if err != nil {
		t.Fatalf("query wrote no generated.tf: %v\n%s", err, out)
	}
	for _, want := range []string{`name`, `"orders"`, `"plain"`, `message_ttl`, `"24h"`, `max_priority`, `import {`} {
		if !strings.Contains(string(generated), want) {
			t.Errorf("generated.tf lacks %s:\n%s", want, generated)
		}
	}
	if strings.Contains(string(generated), `"odd"`) || strings.Contains(string(generated), `"orders.dead"`) {
		t.Errorf("generated.tf holds a queue that is not a logical queue of the backend:\n%s", generated)
	}

	out = tf.mustRun("plan")
	if !strings.Contains(out, "Plan: 2 to import, 0 to add, 0 to change, 0 to destroy.") {
		t.Fatalf("plan of the generated config is not 2 imports and nothing else:\n%s\ngenerated.tf:\n%s", out, generated)
	}
	out = tf.mustRun("apply", "-auto-approve")
	if !strings.Contains(out, "2 imported, 0 added, 0 changed, 0 destroyed") {
		t.Fatalf("apply of the generated config:\n%s", out)
	}
	// The declarations alone: a queue's state and node are the broker's to change.
	after, err := listQueues(accClient(t), vhost, broker.Declared)
	if err != nil || !maps.EqualFunc(before, after, func(a, b broker.Queue) bool {
		return a.Durable == b.Durable && a.AutoDelete == b.AutoDelete && reflect.DeepEqual(a.Arguments, b.Arguments)
	}) {
		t.Errorf("the broker changed (%v):\nbefore %v\nafter  %v", err, before, after)
	}
	if n := messagesIn(t, vhost, "orders"); n != 3 {
		t.Errorf("orders holds %d messages after the import, want the 3 published", n)
	}
	if out = tf.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Errorf("plan after the import is not empty:\n%s", out)
	}
	// The state leaves the queues to the test's vhost cleanup.
	tf.mustRun("state", "rm", "queuey_queue.all_0", "queuey_queue.all_1")
}
