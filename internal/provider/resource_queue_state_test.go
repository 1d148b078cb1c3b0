package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
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
					argumentsChange{`{"auto_delete":true,"x-max-length":10,"x-message-ttl":5000}`, `{"x-message-ttl":5000}`},
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("arguments_json"), knownvalue.StringExact(`{"x-message-ttl":5000}`)),
				},
				Check: func(*terraform.State) error {
					if q, _ := s.Queue("/", "orders"); q.AutoDelete || len(declaredArgs(q)) != 1 {
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

// observedState keeps the prior spelling of a TTL equal by value, renders
// another one short, and sets arguments_json to the broker's table when q
// differs from what the backend declares (so the plan shows drift), else to
// the computed one; a missing q.dead leaves dead_queue null.
func TestObservedState(t *testing.T) {
	t.Parallel()
	s := topology.DefaultSuffixes()
	prior := queueModel{Name: types.StringValue("orders"), Vhost: types.StringValue("/"), MessageTTL: types.StringValue("5000ms")}
	classic := func(args map[string]any) broker.Queue {
		return broker.Queue{Name: "orders", Type: "classic", Durable: true, Arguments: args}
	}
	for _, tc := range []struct {
		name    string
		main    broker.Queue
		deadOK  bool
		ttl     types.String
		args    string
		deadSet bool
	}{
		{name: "same by value", main: classic(map[string]any{"x-message-ttl": json.Number("5000")}), deadOK: true,
			ttl: types.StringValue("5000ms"), args: `{"x-message-ttl":5000}`, deadSet: true},
		{name: "changed", main: classic(map[string]any{"x-message-ttl": json.Number("6000")}), deadOK: true,
			ttl: types.StringValue("6s"), args: `{"x-message-ttl":6000}`, deadSet: true},
		{name: "no TTL, no dead", main: classic(map[string]any{}),
			ttl: types.StringNull(), args: `{}`},
		{name: "drift", main: classic(map[string]any{"x-message-ttl": json.Number("5000"), "x-max-length": json.Number("10")}), deadOK: true,
			ttl: types.StringValue("5000ms"), args: `{"x-max-length":10,"x-message-ttl":5000}`, deadSet: true},
	} {
		got := observedState(prior, tc.main, tc.deadOK, s)
		if !got.MessageTTL.Equal(tc.ttl) || got.ArgumentsJSON.ValueString() != tc.args || got.DeadQueue.IsNull() == tc.deadSet {
			t.Errorf("%s: message_ttl %s, arguments_json %s, dead_queue %s; want %s, %s, set %v",
				tc.name, got.MessageTTL, got.ArgumentsJSON.ValueString(), got.DeadQueue, tc.ttl, tc.args, tc.deadSet)
		}
		if got.ID.ValueString() != queueID("/", "orders") || got.ForceDestroy.IsNull() || got.ForceDestroy.ValueBool() {
			t.Errorf("%s: id %s, force_destroy %s", tc.name, got.ID, got.ForceDestroy)
		}
	}
}
