package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// Drift found by Read shows in the plan: arguments_json goes from the
// broker's table (flags included) to the computed one, and the update
// declares q alone again (q.dead is neither deleted nor declared); after the
// apply, state holds the computed table again.
func TestQueue_driftRedeclares(t *testing.T) {
	s := brokertest.New(t)
	cfg := fakeProviderConfig(s, `  message_ttl = "5s"`)
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("arguments_json"), knownvalue.StringExact(`{"x-message-ttl":5000}`)),
				},
			},
			{
				PreConfig: func() {
					s.PutQueue("/", brokertest.Queue{Name: "orders", Durable: true, AutoDelete: true, Messages: brokertest.Count(0),
						Arguments: map[string]any{"x-message-ttl": 5000, "x-max-length": 10}})
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionUpdate),
					expectArgumentsChange(`{"auto_delete":true,"x-max-length":10,"x-message-ttl":5000}`, `{"x-message-ttl":5000}`),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("arguments_json"), knownvalue.StringExact(`{"x-message-ttl":5000}`)),
				},
				Check: func(*terraform.State) error {
					if q, _ := s.Queue("/", "orders"); q.AutoDelete || len(q.Arguments) != 1 {
						return fmt.Errorf("orders not declared again: %+v", q)
					}
					puts, deletes := s.RequestsMatching("PUT"), s.RequestsMatching("DELETE")
					if len(puts) != 3 || puts[2] != "PUT queues / orders" || len(deletes) != 1 || !strings.HasPrefix(deletes[0], "DELETE queues / orders ?") {
						return fmt.Errorf("the update declared %q and deleted %q; want orders alone", puts, deletes)
					}
					return nil
				},
			},
			{
				Config:           cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
	q, ok := s.Queue("/", "orders")
	if ok {
		t.Errorf("orders left after destroy: %+v", q)
	}
}
