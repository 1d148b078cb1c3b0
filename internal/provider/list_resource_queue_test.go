package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	amqp "github.com/rabbitmq/amqp091-go"
)

// listVhost makes a vhost holding what applications leave on a broker: two
// logical queues as the backend declares them (one with a hold queue), a
// near miss with an argument the backend never declares, and a queue with
// no dead-letter sibling.
func listVhost(t *testing.T) string {
	t.Helper()
	vhost := uniqueName("list")
	createVhost(t, vhost, "")
	ch := amqpChannel(t, vhost)
	declare := func(name string, args amqp.Table) {
		if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
			t.Fatalf("declaring %q: %v", name, err)
		}
	}
	declare("orders", amqp.Table{"x-message-ttl": int32(86400000), "x-max-priority": int32(10)})
	declare("orders.dead", nil)
	declare("orders.deferred.5000", amqp.Table{
		"x-message-ttl": int32(5000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders", "x-expires": int32(10000),
	})
	declare("plain", nil)
	declare("plain.dead", nil)
	declare("odd", amqp.Table{"x-max-length": int32(10)})
	declare("odd.dead", nil)
	declare("lonely", nil)
	return vhost
}

func listConfig(vhost, extra string) string {
	// The provider block comes from the step before: terraform-plugin-testing
	// keeps the configuration next to the .tfquery.hcl file it writes.
	return fmt.Sprintf(`
list "queuey_queue" "all" {
  provider         = queuey
  include_resource = true
  config {
    vhost = %q
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
%s`, vhost, extra)
}

func TestAccQueueList_query(t *testing.T) {
	testAccPreCheck(t)
	vhost := listVhost(t)
	identity := func(name string) map[string]knownvalue.Check {
		return map[string]knownvalue.Check{"name": knownvalue.StringExact(name), "vhost": knownvalue.StringExact(vhost)}
	}
	orders := queryfilter.ByResourceIdentity(identity("orders"))
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)},
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: `provider "queuey" {}`},
			{
				Query:  true,
				Config: listConfig(vhost, ""),
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
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)},
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
