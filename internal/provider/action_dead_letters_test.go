package provider

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
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
		brokerConfig: broker.Config{Endpoint: endpoint, AMQPEndpoint: "amqp://" + brokertest.ClosedAddr(t), Username: "u", Password: "p",
			RetryBudget: -1},
	}
}

// actionConfig is an action's configuration with these attribute values
// (the others null).
func actionConfig(t *testing.T, a action.Action, vals map[string]tftypes.Value) tfsdk.Config {
	t.Helper()
	var sr action.SchemaResponse
	a.Schema(context.Background(), action.SchemaRequest{}, &sr)
	typ, ok := sr.Schema.Type().TerraformType(context.Background()).(tftypes.Object)
	if !ok {
		t.Fatal("an action schema that is not an object")
	}
	all := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		all[name] = tftypes.NewValue(at, nil)
		if v, ok := vals[name]; ok {
			all[name] = v
		}
	}
	return tfsdk.Config{Schema: sr.Schema, Raw: tftypes.NewValue(typ, all)}
}

func str(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

// configured returns the action configured with data.
func configured(a action.Action, data *providerData) action.Action {
	var resp action.ConfigureResponse
	if c, ok := a.(action.ActionWithConfigure); ok {
		c.Configure(context.Background(), action.ConfigureRequest{ProviderData: data}, &resp)
	}
	return a
}

func planDiags(t *testing.T, a action.Action, data *providerData, vals map[string]tftypes.Value) diag.Diagnostics {
	t.Helper()
	a = configured(a, data)
	var resp action.ModifyPlanResponse
	mp, ok := a.(action.ActionWithModifyPlan)
	if !ok {
		t.Fatalf("%T has no ModifyPlan", a)
	}
	mp.ModifyPlan(context.Background(), action.ModifyPlanRequest{Config: actionConfig(t, a, vals)}, &resp)
	return resp.Diagnostics
}

func invokeDiags(t *testing.T, a action.Action, data *providerData, vals map[string]tftypes.Value) (diag.Diagnostics, []string) {
	t.Helper()
	a = configured(a, data)
	var lines []string
	resp := action.InvokeResponse{SendProgress: func(e action.InvokeProgressEvent) { lines = append(lines, e.Message) }}
	a.Invoke(context.Background(), action.InvokeRequest{Config: actionConfig(t, a, vals)}, &resp)
	return resp.Diagnostics, lines
}

func diagText(d diag.Diagnostics) string {
	var b strings.Builder
	for _, x := range d {
		b.WriteString(x.Severity().String() + ": " + x.Summary() + ": " + x.Detail() + "\n")
	}
	return b.String()
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

// A destroy refused because q.dead holds messages names, besides
// force_destroy, both actions, the -invoke command and the before_destroy
// trigger; one refused over q alone does not.
func TestDestroyRefusal_namesDeadLetterActions(t *testing.T) {
	s := brokertest.New(t)
	putIdle(s, "orders")
	dead := idle("orders.dead")
	dead.Messages = brokertest.Count(3)
	s.PutQueue("/", dead)
	err := destroyTopology(context.Background(), fakeBrokerClient(t, s), ordersTarget, false)
	if err == nil {
		t.Fatal("destroy of a q.dead with messages was not refused")
	}
	for _, want := range []string{"force_destroy = true", `action "queuey_redrive_dead_letters" "orders"`,
		"terraform apply -invoke=action.queuey_redrive_dead_letters.orders", "Terraform 1.14", `action "queuey_purge_dead_letters"`,
		"events  = [before_destroy]", "actions = [action.queuey_purge_dead_letters.orders]", "Terraform 1.16"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q:\n%s", want, err)
		}
	}

	s2 := brokertest.New(t)
	putIdle(s2, "orders.dead")
	busyQ := idle("orders")
	busyQ.Messages = brokertest.Count(3)
	s2.PutQueue("/", busyQ)
	err = destroyTopology(context.Background(), fakeBrokerClient(t, s2), ordersTarget, false)
	if err == nil || strings.Contains(err.Error(), "queuey_redrive_dead_letters") {
		t.Errorf("a refusal over q alone names the dead-letter actions: %v", err)
	}
}

// amqp_endpoint: a bad value is a plan error naming the setting, from the
// configuration or the environment.
func TestProvider_amqpEndpointChecked(t *testing.T) {
	t.Setenv(EnvAMQP, "")
	s := brokertest.New(t)
	cfg := func(extra string) string {
		return strings.Replace(fakeProviderConfig(s, ""), `retry_budget = "0s"`, `retry_budget = "0s"`+"\n  "+extra, 1)
	}
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg(`amqp_endpoint = "http://127.0.0.1:5672"`), PlanOnly: true,
				ExpectError: regexp.MustCompile(`Invalid AMQP Endpoint(.|\n)*amqp_endpoint must be an amqp or amqps URL`)},
			{Config: cfg(`amqp_endpoint = "amqp://guest:guest@127.0.0.1:5672"`), PlanOnly: true,
				ExpectError: regexp.MustCompile(`without\s+credentials`)},
		},
	})
}

// The provider's settings reach the client: amqp_endpoint as given, else
// derived from endpoint.
func TestProvider_amqpEndpointDerived(t *testing.T) {
	for _, tc := range []struct{ endpoint, amqpEndpoint, want string }{
		{"http://rabbit.internal:15672", "", "amqp://rabbit.internal:5672"},
		{"https://rabbit.internal", "", "amqps://rabbit.internal:5671"},
		{"https://rabbit.internal", "amqp://10.1.2.3:5673", "amqp://10.1.2.3:5673"},
	} {
		d := &providerData{endpointSet: true, brokerConfig: broker.Config{Endpoint: tc.endpoint, AMQPEndpoint: tc.amqpEndpoint,
			Username: "u", Password: "p"}}
		c, diags := d.brokerClient()
		if diags.HasError() || c.AMQPEndpoint() != tc.want {
			t.Errorf("%s + %q: %s %v, want %s", tc.endpoint, tc.amqpEndpoint, c.AMQPEndpoint(), diags, tc.want)
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

// A destroy refused over the messages of q.dead names the dead-letter
// actions, with the queue's vhost in every block (an action without one takes
// the provider's); one refused over another queue does not. Refused before
// anything was deleted, it offers the redrive and the before_destroy trigger;
// refused midway, after q was deleted, only the purge: a redrive would need q
// declared again, the apply the advice must never lead to.
func TestDestroyRefusal_deadLetterAdvice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, vhost string
		deadHolds   bool   // q.dead holds a message at the checks
		refused     string // the queue whose guarded DELETE is refused, if any
		redrive     bool
		purge       bool
	}{
		{"checks, default vhost", "/", true, "", true, true},
		{"checks, other vhost", "team", true, "", true, true},
		{"midway at q.dead, default vhost", "/", false, "orders.dead", false, true},
		{"midway at q.dead, other vhost", "team", false, "orders.dead", false, true},
		{"midway at q", "/", false, "orders", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := brokertest.New(t)
			if tc.vhost != "/" {
				s.AddVhost(tc.vhost, "")
			}
			s.PutQueue(tc.vhost, idle("orders"))
			dead := idle("orders.dead")
			if tc.deadHolds {
				dead.Messages = brokertest.Count(3)
			}
			s.PutQueue(tc.vhost, dead)
			if tc.refused != "" {
				s.FailDelete(tc.refused, http.StatusBadRequest, "bad_request", "queue '"+tc.refused+"' in vhost '"+tc.vhost+"' is not empty")
			}
			target := ordersTarget
			target.vhost = tc.vhost
			err := destroyTopology(context.Background(), fakeBrokerClient(t, s), target, false)
			if err == nil {
				t.Fatal("the destroy went through")
			}
			msg := err.Error()
			for what, c := range map[string]struct {
				text string
				want bool
			}{
				"the redrive":       {`action "queuey_redrive_dead_letters" "orders"`, tc.redrive},
				"the trigger":       {"events  = [before_destroy]", tc.redrive},
				"the purge":         {`action "queuey_purge_dead_letters" "orders"`, tc.purge},
				"the queue's vhost": {fmt.Sprintf("vhost = %q", tc.vhost), tc.purge},
			} {
				if got := strings.Contains(msg, c.text); got != c.want {
					t.Errorf("names %s: %v, want %v:\n%s", what, got, c.want, msg)
				}
			}
		})
	}
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
			c, err := broker.New(broker.Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: -1})
			if err != nil {
				t.Fatal(err)
			}
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
