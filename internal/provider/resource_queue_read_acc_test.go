package provider

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// Reads of queues in one vhost share listings (internal/broker/reads.go).
// These tests show that sharing never hides a change: a queue deleted out of
// band is missed by no plan, and a queue created in an apply is seen by a
// read later in the same apply.

func TestAccQueue_sharedReadSeesOutOfBandDelete(t *testing.T) {
	testAccPreCheck(t)
	base := uniqueName("oob")
	names := []string{base + "-0", base + "-1", base + "-2", base + "-3", base + "-4"}
	cleanupQueues(t, "/", base)
	cfg := proxiedQueuesConfig(os.Getenv(EnvEndpoint), "", base, len(names), `  message_ttl = "1m"`)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, "/", names...),
		Steps: []resource.TestStep{
			{
				Config: cfg,
			},
			{
				// Between two plans, one of the five queues disappears.
				PreConfig: func() { deleteOutOfBand(t, names[2]) },
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("queuey_queue.q[0]", plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction("queuey_queue.q[1]", plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction("queuey_queue.q[2]", plancheck.ResourceActionCreate),
						plancheck.ExpectResourceAction("queuey_queue.q[3]", plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction("queuey_queue.q[4]", plancheck.ResourceActionNoop),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: func(*terraform.State) error {
					for _, n := range []string{names[2], names[2] + ".dead"} {
						if !queueExists(t, "/", n) {
							return fmt.Errorf("queue %q was not declared again", n)
						}
					}
					return nil
				},
			},
		},
	})
}

func TestAccQueue_createdQueueReadBackInSameApply(t *testing.T) {
	testAccPreCheck(t)
	// Three logical queues whose names are hold-queue names of another
	// queue: once created, the queuey_hold_queues data sources, read later
	// in the same apply (depends_on), must list them. Their listings may be
	// shared with each other, never with a request sent before the create.
	base := uniqueName("readback")
	holds := []string{base + ".deferred.5000", base + ".deferred.60000", base + ".deferred.700"}
	for _, n := range holds {
		cleanupQueues(t, "/", n)
	}
	cleanupQueues(t, "/", base)
	cfg := "provider \"queuey\" {}\n"
	for i, n := range holds {
		cfg += fmt.Sprintf(`
resource "queuey_queue" "h%[1]d" {
  name = %[2]q
}

data "queuey_hold_queues" "d%[1]d" {
  queue      = %[3]q
  depends_on = [queuey_queue.h%[1]d]
}
`, i, n, base)
	}
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, "/", holds...),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: func(s *terraform.State) error {
					for i, n := range holds {
						ds := s.RootModule().Resources[fmt.Sprintf("data.queuey_hold_queues.d%d", i)]
						if ds == nil {
							return fmt.Errorf("data source d%d missing from state", i)
						}
						found := false
						for k, v := range ds.Primary.Attributes {
							if strings.HasPrefix(k, "names.") && v == n {
								found = true
							}
						}
						if !found {
							return fmt.Errorf("data source d%d, read after queue %q was created in the same apply, does not list it: %v",
								i, n, ds.Primary.Attributes)
						}
					}
					return nil
				},
			},
		},
	})
}
