package provider

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// Unit tests of the dead-letter actions against brokertest, the fake
// management API: the plan warning, the refusals before anything moves, the
// destroy refusal's advice and the AMQP URL the provider settings give.

// fakeData is the provider data of a provider configured for the fake, with
// an AMQP endpoint nothing listens on: an action that got as far as AMQP
// fails with "Cannot Connect Over AMQP".
func fakeData(t *testing.T, endpoint string) *providerData {
	return &providerData{
		suffixes: topology.DefaultSuffixes(), vhost: "/", endpointSet: true,
		brokerConfig: broker.Config{Endpoint: endpoint, Username: "u", Password: "p", RetryBudget: -1},
		amqpEndpoint: "amqp://" + brokertest.ClosedAddr(t),
	}
}

func str(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

// actionConfig configures a with data, and returns a configuration of a with these attribute values
// (the others null).
func actionConfig(t *testing.T, a action.Action, data *providerData, vals map[string]tftypes.Value) tfsdk.Config {
	t.Helper()
	a.(action.ActionWithConfigure).Configure(context.Background(), action.ConfigureRequest{ProviderData: data}, &action.ConfigureResponse{}) //nolint:forcetypeassert // both actions take the provider's data
	var sr action.SchemaResponse
	a.Schema(context.Background(), action.SchemaRequest{}, &sr)
	return configOf(t, tfsdk.Config{Schema: sr.Schema}, vals)
}

// planDiags runs the ModifyPlan of a, configured with data, with these
// attribute values: the plan-time diagnostics.
func planDiags(t *testing.T, a action.Action, data *providerData, vals map[string]tftypes.Value) diag.Diagnostics {
	t.Helper()
	var resp action.ModifyPlanResponse
	a.(action.ActionWithModifyPlan).ModifyPlan(context.Background(), action.ModifyPlanRequest{Config: actionConfig(t, a, data, vals)}, &resp) //nolint:forcetypeassert // both actions warn at plan time
	return resp.Diagnostics
}

// invokeDiags invokes a, configured with data, with these attribute values:
// its diagnostics and the progress messages it sent.
func invokeDiags(t *testing.T, a action.Action, data *providerData, vals map[string]tftypes.Value) (diag.Diagnostics, []string) {
	t.Helper()
	var lines []string
	resp := action.InvokeResponse{SendProgress: func(e action.InvokeProgressEvent) { lines = append(lines, e.Message) }}
	a.Invoke(context.Background(), action.InvokeRequest{Config: actionConfig(t, a, data, vals)}, &resp)
	return resp.Diagnostics, lines
}

// diagText is diagnostics as "severity: summary: detail" lines.
func diagText(d diag.Diagnostics) (text string) {
	for _, x := range d {
		text += x.Severity().String() + ": " + x.Summary() + ": " + x.Detail() + "\n"
	}
	return text
}

// The plan warns with the count on q.dead and what invoking does with it,
// "1 message" in the singular, the limit when it moves fewer.
func TestDeadLetterActions_planWarning(t *testing.T) {
	s := brokertest.New(t)
	s.PutQueue("/", idle("orders"))
	dead := idle("orders.dead")
	dead.Messages = brokertest.Count(12)
	s.PutQueue("/", dead)
	data := fakeData(t, s.URL)
	q := map[string]tftypes.Value{"queue": str("orders")}
	for _, tc := range []struct {
		a    action.Action
		vals map[string]tftypes.Value
		want string
	}{
		{NewRedriveDeadLettersAction(), q, "Dead Letters Will Be Moved: orders.dead holds 12 messages: invoking moves them to orders."},
		{NewPurgeDeadLettersAction(), q, "Dead Letters Will Be Deleted: orders.dead holds 12 messages: invoking deletes them."},
		{NewRedriveDeadLettersAction(), map[string]tftypes.Value{"queue": str("orders"), "limit": tftypes.NewValue(tftypes.Number, 5)},
			"orders.dead holds 12 messages: invoking moves the oldest 5 of them to orders (limit)."},
		{NewRedriveDeadLettersAction(), map[string]tftypes.Value{"queue": str("orders"), "limit": tftypes.NewValue(tftypes.Number, 12)},
			"orders.dead holds 12 messages: invoking moves them to orders."},
	} {
		d := planDiags(t, tc.a, data, tc.vals)
		if d.HasError() || d.WarningsCount() != 1 || !strings.Contains(diagText(d), tc.want) {
			t.Errorf("plan diagnostics:\n%s\nwant a warning with %q", diagText(d), tc.want)
		}
	}
	dead.Messages = brokertest.Count(1)
	s.PutQueue("/", dead)
	if d := planDiags(t, NewPurgeDeadLettersAction(), data, q); !strings.Contains(diagText(d), "orders.dead holds 1 message: invoking deletes them.") {
		t.Errorf("singular:\n%s", diagText(d))
	}
}

// The warning is best effort: an empty or missing q.dead, an unreachable
// broker, settings unknown at plan time or no endpoint give no diagnostic.
func TestDeadLetterActions_planWarningSkipped(t *testing.T) {
	s := brokertest.New(t)
	s.PutQueue("/", idle("orders"))
	s.PutQueue("/", idle("orders.dead"))
	q := map[string]tftypes.Value{"queue": str("orders")}
	unknownQueue := map[string]tftypes.Value{"queue": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)}
	unknownSettings := fakeData(t, s.URL)
	unknownSettings.brokerUnknown = true
	noEndpoint := fakeData(t, s.URL)
	noEndpoint.endpointSet = false
	for name, tc := range map[string]struct {
		data *providerData
		vals map[string]tftypes.Value
	}{
		"empty":            {fakeData(t, s.URL), q},
		"missing":          {fakeData(t, s.URL), map[string]tftypes.Value{"queue": str("payments")}},
		"unreachable":      {fakeData(t, "http://"+brokertest.ClosedAddr(t)), q},
		"unknown settings": {unknownSettings, q},
		"unknown queue":    {fakeData(t, s.URL), unknownQueue},
		"no endpoint":      {noEndpoint, q},
	} {
		for _, a := range []action.Action{NewRedriveDeadLettersAction(), NewPurgeDeadLettersAction()} {
			start := time.Now()
			if d := planDiags(t, a, tc.data, tc.vals); len(d) != 0 {
				t.Errorf("%s: plan diagnostics:\n%s", name, diagText(d))
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("%s: the plan took %s", name, took)
			}
		}
	}
}

// A missing q or q.dead is an error naming it, and nothing is tried over
// AMQP; so is a q.dead that is not running, for a purge, with its node and
// state.
func TestDeadLetterActions_refusals(t *testing.T) {
	s := brokertest.New(t)
	q := map[string]tftypes.Value{"queue": str("orders")}
	for _, tc := range []struct {
		name   string
		queues []brokertest.Queue
		a      action.Action
		want   string
	}{
		{"no q, redrive", []brokertest.Queue{idle("orders.dead")}, NewRedriveDeadLettersAction(), `Queue Not Found: Queue "orders" does not exist in vhost "/"`},
		{"no q, purge", []brokertest.Queue{idle("orders.dead")}, NewPurgeDeadLettersAction(), `Queue Not Found: Queue "orders" does not exist`},
		{"no q.dead, redrive", []brokertest.Queue{idle("orders")}, NewRedriveDeadLettersAction(), `Queue Not Found: Queue "orders.dead" does not exist`},
		{"no q.dead, purge", []brokertest.Queue{idle("orders")}, NewPurgeDeadLettersAction(), `Queue Not Found: Queue "orders.dead" does not exist`},
		{"q.dead down, purge", []brokertest.Queue{idle("orders"), {Name: "orders.dead", State: "down", Node: "rabbit@node-2"}},
			NewPurgeDeadLettersAction(), "Queue Not Running: Nothing was deleted: orders.dead in vhost \"/\" is not running, most likely because the cluster node that hosts it is down or restarting:\n  - orders.dead on node rabbit@node-2: state down"},
		{"all there, redrive", []brokertest.Queue{idle("orders"), idle("orders.dead")}, NewRedriveDeadLettersAction(), "Cannot Connect Over AMQP"},
		{"all there, purge", []brokertest.Queue{idle("orders"), idle("orders.dead")}, NewPurgeDeadLettersAction(), "Cannot Connect Over AMQP"},
	} {
		s.RemoveVhost("/")
		s.AddVhost("/", "")
		for _, qu := range tc.queues {
			s.PutQueue("/", qu)
		}
		d, lines := invokeDiags(t, tc.a, fakeData(t, s.URL), q)
		if !d.HasError() || !strings.Contains(diagText(d), tc.want) {
			t.Errorf("%s:\n%s\nwant an error with %q", tc.name, diagText(d), tc.want)
		}
		if len(lines) != 0 {
			t.Errorf("%s: progress %q", tc.name, lines)
		}
	}
}

// The provider serves both action schemas, and a configuration without
// action blocks works on any CLI, those without actions included: the
// opentofu-unit stage runs this with OpenTofu, the oldest Terraform stage
// with Terraform 1.8 (they ignore the action schemas).
func TestProvider_actionsRegisteredWorkWithoutActionSupport(t *testing.T) {
	server, err := testProviderFactories["queuey"]()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("GetProviderSchema: %v %v", err, resp.Diagnostics)
	}
	for _, name := range []string{"queuey_redrive_dead_letters", "queuey_purge_dead_letters"} {
		if _, ok := resp.ActionSchemas[name]; !ok {
			t.Errorf("no action schema %s", name)
		}
	}
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
provider "queuey" {
  amqp_endpoint = "amqp://127.0.0.1:5672"
}

data "queuey_hold_queue" "retry" {
  queue = "orders"
  delay = "30s"
}
`,
			Check: resource.TestCheckResourceAttr("data.queuey_hold_queue.retry", "name", "orders.deferred.30000"),
		}},
	})
}

// After a purge, the action waits until the management API reports q.dead
// empty (its counts lag the queue), so that a destroy right after it is not
// refused on a stale count: a count that drops just inside the wait, counted
// from its start, is seen; one that drops just after it is not. The first
// listing is slow, so that a wait counted from its answer would see the late
// count. (TestDocsLimitsTable pins purgeWait.)
func TestWaitForCount(t *testing.T) {
	t.Parallel()
	const wait, margin, slowFirst = 500 * time.Millisecond, 150 * time.Millisecond, 250 * time.Millisecond
	for _, tc := range []struct {
		name    string
		emptyAt time.Duration // from the wait's start
		seen    bool
	}{
		{"count drops just inside", wait - margin, true},
		{"count drops just outside", wait + margin, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := brokertest.New(t)
			five, zero := int64(5), int64(0)
			s.PutQueue("/", brokertest.Queue{Name: "orders.dead", Durable: true, Messages: &five})
			var n atomic.Int64
			s.Intercept(func(_ http.ResponseWriter, _ *http.Request) bool {
				if n.Add(1) == 1 {
					time.Sleep(slowFirst)
				}
				return false
			})
			c := fakeBrokerClient(t, s)
			time.AfterFunc(tc.emptyAt, func() {
				s.PutQueue("/", brokertest.Queue{Name: "orders.dead", Durable: true, Messages: &zero})
			})
			seen, last := waitForCount(context.Background(), c, deadLetters{vhost: "/", queue: "orders", dead: "orders.dead"}, wait,
				10*time.Millisecond)
			if seen != tc.seen {
				t.Errorf("count 0 from %s after the start, wait %s: seen %v (last count %v), want %v", tc.emptyAt, wait, seen,
					countText(last, "message"), tc.seen)
			}
		})
	}
}
