package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

func TestAccHoldQueues_recognisesOnlyHoldQueues(t *testing.T) {
	testAccPreCheck(t)
	t.Parallel()
	q := uniqueName("list")
	cleanupQueues(t, "/", q)
	c := accClient(t)
	ctx := context.Background()
	holdArgs := func(ttl int64) map[string]any {
		a, err := topology.HoldQueueArgs(q, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return a.Map()
	}
	// Real hold queues, declared as the application declares them, with TTLs
	// long enough that neither they nor their messages expire during the test
	// (a hold queue expires after twice its TTL unused), and names whose
	// lexical order is not their TTLs' order.
	for _, ttl := range []int64{600000, 900000, 1200000} {
		if err := c.DeclareQueue(ctx, "/", topology.HoldQueueName(q, ttl, topology.DefaultSuffixes()), holdArgs(ttl)); err != nil {
			t.Fatal(err)
		}
	}
	// Look-alikes that must not be listed.
	for _, name := range []string{q, q + ".dead", q + ".deferred.", q + ".deferred.x1", q + ".deferred.5000.bak",
		q + ".deferred.05000", q + "2.deferred.5000", q + ".deferred.99999999999"} {
		if err := c.DeclareQueue(ctx, "/", name, nil); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, amqpChannel(t, "/"), q+".deferred.900000", 2)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: fmt.Sprintf(`
provider "queuey" {}

data "queuey_hold_queues" "test" {
  queue = %q
}
`, q),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.queuey_hold_queues.test", tfjsonpath.New("vhost"), knownvalue.StringExact("/")),
					statecheck.ExpectKnownValue("data.queuey_hold_queues.test", tfjsonpath.New("names"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringExact(q + ".deferred.600000"),
						knownvalue.StringExact(q + ".deferred.900000"),
						knownvalue.StringExact(q + ".deferred.1200000"),
					})),
					statecheck.ExpectKnownValue("data.queuey_hold_queues.test", tfjsonpath.New("queues").AtSliceIndex(1), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"name":     knownvalue.StringExact(q + ".deferred.900000"),
						"ttl_ms":   knownvalue.Int64Exact(900000),
						"messages": knownvalue.Int64Exact(2),
					})),
					statecheck.ExpectKnownValue("data.queuey_hold_queues.test", tfjsonpath.New("queues").AtSliceIndex(2).AtMapKey("ttl_ms"), knownvalue.Int64Exact(1200000)),
				},
			},
			{
				Config: fmt.Sprintf(`
provider "queuey" {}

data "queuey_hold_queues" "test" {
  queue = %q
  vhost = %q
}
`, q, uniqueName("novhost")),
				ExpectError: regexp.MustCompile(`Vhost\s+Not\s+Found`),
			},
		},
	})
}
