package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// The rule of a change that declares q again: without force_destroy, a q
// not running, with a consumer or with a busy hold queue is refused, in that
// order; messages (or a count not reported, never taken for 0) are moved with
// keep_messages_on_change, deleted with force_destroy (keep wins), refused
// with neither; an empty q is deleted and declared.
func TestDecideRedeclare(t *testing.T) {
	t.Parallel()
	five, zero := brokertest.Count(5), brokertest.Count(0)
	holds := []string{"orders.deferred.30000: 3 messages, 0 consumers"}
	for _, tc := range []struct {
		name     string
		f        redeclareFacts
		wantStep redeclareStep
		wantWhy  redeclareRefusal
	}{
		{"empty", redeclareFacts{running: true, messages: zero}, redeclareEmpty, refuseNone},
		{"empty, keep", redeclareFacts{running: true, messages: zero, keep: true}, redeclareEmpty, refuseNone},
		{"messages", redeclareFacts{running: true, messages: five}, redeclareEmpty, refuseMessages},
		{"count not reported", redeclareFacts{running: true}, redeclareEmpty, refuseMessages},
		{"messages, keep", redeclareFacts{running: true, messages: five, keep: true}, redeclareMoving, refuseNone},
		{"count not reported, keep", redeclareFacts{running: true, keep: true}, redeclareMoving, refuseNone},
		{"consumer, keep", redeclareFacts{running: true, messages: zero, consumers: 1, keep: true}, redeclareEmpty, refuseConsumers},
		{"busy hold queue, keep", redeclareFacts{running: true, messages: five, busyHolds: holds, keep: true}, redeclareEmpty, refuseHolds},
		{"not running, with a consumer, keep", redeclareFacts{consumers: 1, keep: true}, redeclareEmpty, refuseNotRunning},
		{"consumer and busy hold queue", redeclareFacts{running: true, messages: zero, consumers: 2, busyHolds: holds}, redeclareEmpty, refuseConsumers},
		{"force: no check", redeclareFacts{consumers: 1, messages: five, busyHolds: holds, force: true}, redeclareDropping, refuseNone},
		{"force, empty", redeclareFacts{running: true, messages: zero, force: true}, redeclareDropping, refuseNone},
		{"force and keep: keep wins", redeclareFacts{running: true, consumers: 1, messages: five, force: true, keep: true}, redeclareMoving, refuseNone},
		{"force and keep, count not reported", redeclareFacts{running: true, force: true, keep: true}, redeclareMoving, refuseNone},
		{"force and keep, empty", redeclareFacts{running: true, messages: zero, force: true, keep: true}, redeclareDropping, refuseNone},
	} {
		step, why := decideRedeclare(tc.f)
		if why != tc.wantWhy || (why == refuseNone && step != tc.wantStep) {
			t.Errorf("%s: step %d, refusal %d; want %d, %d", tc.name, step, why, tc.wantStep, tc.wantWhy)
		}
	}
}

// An update declares q again when the table in state (the broker's, after
// drift) is not the wanted one, or state has none; not otherwise.
func TestNeedsRedeclare(t *testing.T) {
	t.Parallel()
	m := replaceModel("5s", false)
	if needsRedeclare(m, m.ArgumentsJSON.ValueString()) {
		t.Error("the same table declares q again")
	}
	if !needsRedeclare(m, `{"x-message-ttl":10000}`) {
		t.Error("a new table does not declare q again")
	}
	m.ArgumentsJSON = jsontypes.NewNormalizedNull()
	if !needsRedeclare(m, `{}`) {
		t.Error("a state without a table does not declare q again")
	}
}

// A new message_ttl is an update in place, not a replacement: refused while q
// holds messages without keep_messages_on_change (nothing deleted), and with
// force_destroy q alone is deleted and declared again; q.dead keeps its
// messages and is neither deleted nor declared.
func TestQueue_ttlChangeUpdatesInPlace(t *testing.T) {
	s := brokertest.New(t)
	// An AMQP endpoint that refuses connections: no move can start.
	amqp := fmt.Sprintf("amqp_endpoint = \"amqp://%s\"", brokertest.ClosedAddr(t))
	withTTL := func(ttl, more string) string {
		return fakeProviderConfig(s, fmt.Sprintf("  message_ttl = %q\n%s", ttl, more), amqp)
	}
	var putsBefore int
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: withTTL("5s", "")},
			{
				PreConfig: func() {
					s.PutQueue("/", brokertest.Queue{Name: "orders", Durable: true, Messages: brokertest.Count(3),
						Arguments: map[string]any{"x-message-ttl": 5000}})
					s.PutQueue("/", brokertest.Queue{Name: "orders.dead", Durable: true, Messages: brokertest.Count(5)})
					putsBefore = len(s.RequestsMatching("PUT"))
				},
				Config: withTTL("10s", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionUpdate),
				}},
				ExpectError: regexp.MustCompile(`(?s)Queue\s+Holds\s+Messages:\s+Change\s+Refused.*it\s+holds\s+3\s+messages.*keep_messages_on_change\s+=\s+true`),
			},
			{
				PreConfig: func() {
					if d := s.RequestsMatching("DELETE"); len(d) > 0 || len(s.RequestsMatching("PUT")) != putsBefore {
						t.Errorf("a refused change deleted %q or declared", d)
					}
				},
				Config: withTTL("10s", "  force_destroy = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					if q, _ := s.Queue("/", "orders"); fmt.Sprint(declaredArgs(q)) != "map[x-message-ttl:10000]" {
						return fmt.Errorf("orders has %v", q.Arguments)
					}
					if d, _ := s.Queue("/", "orders.dead"); d.Messages == nil || *d.Messages != 5 {
						return fmt.Errorf("orders.dead lost its messages: %+v", d)
					}
					if got := strings.Join(s.RequestsMatching("DELETE"), "|"); got != "DELETE queues / orders" {
						return fmt.Errorf("deleted %s, want orders alone", got)
					}
					if puts := s.RequestsMatching("PUT")[putsBefore:]; strings.Join(puts, "|") != "PUT queues / orders" {
						return fmt.Errorf("declared %q, want orders alone", puts)
					}
					return nil
				},
			},
		},
	})
}

// A refresh that finds the holding queue of an interrupted change makes the
// plan an update with redeclaring_messages going to null; the apply, which
// cannot reach AMQP here, fails saying where the messages wait and that the
// next apply moves them back, and the holding queue is left as it was.
func TestQueue_interruptedChangePlansUpdate(t *testing.T) {
	s := brokertest.New(t)
	cfg := fakeProviderConfig(s, "", fmt.Sprintf("amqp_endpoint = \"amqp://%s\"", brokertest.ClosedAddr(t)))
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg, ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("redeclaring_messages"), knownvalue.Null()),
			}},
			{
				PreConfig: func() {
					s.PutQueue("/", brokertest.Queue{Name: "orders.redeclaring", Durable: true,
						Messages: brokertest.Count(1204)})
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("redeclaring_messages"), knownvalue.Null()),
				}},
				ExpectError: regexp.MustCompile(`(?s)Change\s+Interrupted:\s+Messages\s+Wait\s+In\s+orders\.redeclaring.*Nothing\s+is\s+lost:\s+the\s+messages\s+not\s+moved\s+back\s+wait\s+in\s+orders\.redeclaring.*next\s+terraform\s+apply`),
			},
			{
				PreConfig: func() {
					if q, ok := s.Queue("/", "orders.redeclaring"); !ok || *q.Messages != 1204 {
						t.Errorf("the holding queue was touched: %+v, %v", q, ok)
					}
					s.RemoveQueue("/", "orders.redeclaring")
				},
				Config:           cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}
