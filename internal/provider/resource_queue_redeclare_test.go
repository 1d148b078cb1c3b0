package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
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

// The rule of a change that declares q again: without force_destroy, a q
// not running, with a consumer or with a busy hold queue is refused, in that
// order; messages (or a count not reported, never taken for 0) are moved with
// keep_messages_on_change, deleted with force_destroy (keep wins), refused
// with neither; an empty q is deleted and declared.
func TestDecideRedeclare(t *testing.T) {
	t.Parallel()
	five, zero := count(5), count(0)
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

// Each refusal changes nothing (no DELETE, no PUT) and says what to do;
// q.dead and the hold queues are never deleted nor declared; an empty q is
// deleted guarded and declared with the new arguments; force_destroy deletes
// q unguarded, its messages with it, and touches nothing else.
func TestRedeclare(t *testing.T) {
	t.Parallel()
	want := topology.Queue{Name: "orders", Args: topology.Arguments{topology.ArgMaxPriority: topology.Int(10)}}
	for _, tc := range []struct {
		name        string
		main        brokertest.Queue
		hold        *brokertest.Queue
		force, keep bool
		wantErr     []string
		wantWhy     redeclareRefusal
		wantDeletes []string
	}{
		{name: "consumer", main: brokertest.Queue{Consumers: 2, Messages: count(0)}, keep: true, wantWhy: refuseConsumers,
			wantErr: []string{`Queue "orders" in vhost "/" was not changed`, `{"x-max-priority":10}`, "it has 2 consumers", "Stop the application"}},
		{name: "busy hold queue", main: brokertest.Queue{Messages: count(0)}, keep: true, wantWhy: refuseHolds,
			hold:    &brokertest.Queue{Name: "orders.deferred.30000", Messages: count(3)},
			wantErr: []string{"orders.deferred.30000: 3 messages, 0 consumers", "at most 30s (its TTL)"}},
		{name: "not running", main: brokertest.Queue{State: "down", Node: "rabbit@n2", Messages: count(0)}, keep: true, wantWhy: refuseNotRunning,
			wantErr: []string{"orders on node rabbit@n2: state down", "rabbitmqctl"}},
		{name: "messages", main: brokertest.Queue{Messages: count(1204)}, wantWhy: refuseMessages,
			wantErr: []string{"it holds 1,204 messages", "keep_messages_on_change = true", "orders.redeclaring", "force_destroy = true"}},
		{name: "empty", main: brokertest.Queue{Messages: count(0)}, hold: &brokertest.Queue{Name: "orders.deferred.30000", Messages: count(0)},
			wantDeletes: []string{"DELETE queues / orders ?if-empty=true&if-unused=true"}},
		{name: "force_destroy", main: brokertest.Queue{Consumers: 1, Messages: count(7)}, force: true,
			hold:        &brokertest.Queue{Name: "orders.deferred.30000", Messages: count(3)},
			wantDeletes: []string{"DELETE queues / orders"}},
	} {
		fake := brokertest.New(t)
		tc.main.Name, tc.main.Durable = "orders", true
		fake.PutQueue("/", tc.main)
		fake.PutQueue("/", brokertest.Queue{Name: "orders.dead", Durable: true, Messages: count(5)})
		if tc.hold != nil {
			fake.PutQueue("/", *tc.hold)
		}
		err := redeclare(context.Background(), fakeBrokerClient(t, fake), ordersTarget, want, tc.force, tc.keep)
		var refused *redeclareRefusedError
		switch {
		case tc.wantWhy != refuseNone && (!errors.As(err, &refused) || refused.why != tc.wantWhy):
			t.Errorf("%s: %v, want refusal %d", tc.name, err, tc.wantWhy)
		case tc.wantWhy == refuseNone && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		}
		for _, w := range tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v lacks %q", tc.name, err, w)
			}
		}
		if got := fake.RequestsMatching("DELETE"); strings.Join(got, "|") != strings.Join(tc.wantDeletes, "|") {
			t.Errorf("%s: deleted %q, want %q", tc.name, got, tc.wantDeletes)
		}
		puts := fake.RequestsMatching("PUT")
		q, _ := fake.Queue("/", "orders")
		switch {
		case tc.wantWhy != refuseNone && len(puts) > 0:
			t.Errorf("%s: a refusal declared %q", tc.name, puts)
		case tc.wantWhy == refuseNone && (strings.Join(puts, "|") != "PUT queues / orders" || len(q.Arguments) != 1):
			t.Errorf("%s: declared %q, orders now %+v; want orders alone, with the new arguments", tc.name, puts, q)
		}
	}
}

// redeclareConfig is a queue with these settings on the fake, with an AMQP
// endpoint that refuses connections (no move can start).
func redeclareConfig(s *brokertest.Server, amqpAddr, body string) string {
	return fmt.Sprintf(`
provider "queuey" {
  endpoint      = %q
  amqp_endpoint = "amqp://%s"
  username      = "u"
  password      = "p"
  retry_budget  = "0s"
}

resource "queuey_queue" "test" {
  name = "orders"
%s
}
`, s.URL, amqpAddr, body)
}

// A new message_ttl is an update in place, not a replacement: refused while q
// holds messages without keep_messages_on_change (nothing deleted), and with
// force_destroy q alone is deleted and declared again; q.dead keeps its
// messages and is neither deleted nor declared.
func TestQueue_ttlChangeUpdatesInPlace(t *testing.T) {
	s := brokertest.New(t)
	amqpAddr := brokertest.ClosedAddr(t)
	withTTL := func(ttl, more string) string {
		return redeclareConfig(s, amqpAddr, fmt.Sprintf("  message_ttl = %q\n%s", ttl, more))
	}
	var putsBefore int
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: withTTL("5s", "")},
			{
				PreConfig: func() {
					s.PutQueue("/", brokertest.Queue{Name: "orders", Durable: true, Messages: count(3),
						Arguments: map[string]any{"x-message-ttl": 5000}})
					s.PutQueue("/", brokertest.Queue{Name: "orders.dead", Durable: true, Messages: count(5)})
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
					if q, _ := s.Queue("/", "orders"); fmt.Sprint(q.Arguments) != "map[x-message-ttl:10000]" {
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
	cfg := redeclareConfig(s, brokertest.ClosedAddr(t), "")
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg, ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("redeclaring_messages"), knownvalue.Null()),
			}},
			{
				PreConfig: func() {
					s.PutQueue("/", brokertest.Queue{Name: "orders.redeclaring", Durable: true, Messages: count(1204)})
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

// The plan's warning of a change gives q's counts and what the apply will do,
// by the rule, from what the listing shows.
func TestRedeclareWarning(t *testing.T) {
	t.Parallel()
	plan := replaceModel("10s", false)
	plan.ArgumentsJSON = jsontypes.NewNormalizedValue(`{"x-message-ttl":10000}`)
	queues := func(messages int64, consumers int64, hold int64) map[string]broker.Queue {
		return map[string]broker.Queue{
			"orders":                {Name: "orders", Messages: count(messages), Consumers: count(consumers)},
			"orders.dead":           {Name: "orders.dead", Messages: count(5), Consumers: count(0)},
			"orders.deferred.30000": {Name: "orders.deferred.30000", Messages: count(hold), Consumers: count(0)},
		}
	}
	for _, tc := range []struct {
		name        string
		queues      map[string]broker.Queue
		force, keep bool
		want        string
	}{
		{"messages", queues(1204, 0, 0), false, false, "It holds 1,204 messages and has 0 consumers. The apply will refuse and change nothing " +
			"while it holds messages, unless keep_messages_on_change = true (moves them to orders.redeclaring and back)"},
		{"keep", queues(1204, 0, 0), false, true, "keep_messages_on_change = true: the apply moves its messages to orders.redeclaring and back"},
		{"force", queues(1204, 0, 0), true, false, "force_destroy = true: the apply deletes it without checks, and ANY MESSAGE IT HOLDS WILL BE LOST"},
		{"consumer", queues(0, 1, 0), false, true, "has 1 consumer. The apply will refuse and change nothing while it has a consumer"},
		{"hold queue", queues(0, 0, 3), false, true, "while these hold queues hold messages (or set force_destroy = true):\n  - orders.deferred.30000: 3 messages"},
		{"empty", queues(0, 0, 0), false, false, "It is empty: the apply deletes it (only if still empty and unused) and declares it anew"},
		{"q not listed", map[string]broker.Queue{}, false, false, "It is empty"},
	} {
		plan.ForceDestroy, plan.KeepMessages = types.BoolValue(tc.force), types.BoolValue(tc.keep)
		got := redeclareWarning(ordersTarget, tc.queues, plan)
		if !strings.Contains(got, tc.want) || !strings.Contains(got, `with the arguments {"x-message-ttl":10000}`) {
			t.Errorf("%s: %q lacks %q", tc.name, got, tc.want)
		}
	}
}

// After each move between q and the holding queue, the guarded delete of the
// queue emptied decides: gone is done, an error other than a refusal stops,
// a refusal moves again until redeclareRounds moves were made, then
// force_destroy deletes unguarded and without it the change stops.
func TestAfterMove(t *testing.T) {
	t.Parallel()
	refused := fmt.Errorf("delete: %w", broker.ErrNotEmpty)
	failed := errors.New("connection reset")
	for _, tc := range []struct {
		err   error
		round int
		force bool
		want  moveNext
	}{
		{nil, 1, false, moveDone},
		{nil, redeclareRounds, true, moveDone},
		{failed, 1, true, moveFailed},
		{failed, redeclareRounds, false, moveFailed},
		{refused, 1, false, moveAgain},
		{refused, redeclareRounds - 1, true, moveAgain},
		{refused, redeclareRounds, false, moveGiveUp},
		{refused, redeclareRounds, true, moveForce},
	} {
		if got := afterMove(tc.err, tc.round, tc.force); got != tc.want {
			t.Errorf("afterMove(%v, %d, %v) = %d, want %d", tc.err, tc.round, tc.force, got, tc.want)
		}
	}
}

// What an apply that declares q again leaves when a step fails, on the fake
// with an AMQP endpoint that refuses connections: before any message moved,
// the error is plain and the holding queue is not declared; once messages
// may wait in the holding queue (q's moved aside, or an interrupted change
// found), it is an *interruptedError and the holding queue stays.
func TestRedeclare_failures(t *testing.T) {
	t.Parallel()
	want := topology.Queue{Name: "orders", Args: topology.Arguments{topology.ArgMaxPriority: topology.Int(10)}}
	long := strings.Repeat("q", topology.MaxQueueNameBytes-len(topology.RedeclaringSuffix)+1)
	for _, tc := range []struct {
		name        string
		queue       string
		messages    int64
		holding     bool
		keep        bool
		fault       func(*brokertest.Server)
		interrupted bool
		wantErr     string
		wantReqs    []string // the DELETEs and PUTs, in order
	}{
		{name: "declare refused", fault: func(s *brokertest.Server) {
			s.Script(func(r *http.Request) bool { return r.Method == http.MethodPut }, brokertest.Reply(http.StatusInternalServerError, `{"error":"boom","reason":"boom"}`))
		}, wantErr: "boom", wantReqs: []string{"DELETE queues / orders ?if-empty=true&if-unused=true", "PUT queues / orders"}},
		{name: "guarded delete refused", fault: func(s *brokertest.Server) {
			s.FailDelete("orders", http.StatusBadRequest, "bad_request", brokertest.NotEmptyReason("/", "orders"))
		}, wantErr: "a message or a consumer came since it was checked", wantReqs: []string{"DELETE queues / orders ?if-empty=true&if-unused=true"}},
		{name: "interrupted change found", holding: true, interrupted: true, wantErr: "the messages not moved back wait in orders.redeclaring",
			wantReqs: []string{"DELETE queues / orders ?if-empty=true&if-unused=true", "PUT queues / orders"}},
		{name: "keep, move aside fails", messages: 5, keep: true, interrupted: true, wantErr: "wait in orders.redeclaring",
			wantReqs: []string{"PUT queues / orders.redeclaring"}},
		{name: "keep, holding queue name too long", queue: long, messages: 5, keep: true, wantErr: "set force_destroy = true and keep_messages_on_change = false"},
	} {
		fake := brokertest.New(t)
		target := ordersTarget
		if tc.queue != "" {
			target.queue = tc.queue
		}
		fake.PutQueue("/", brokertest.Queue{Name: target.queue, Durable: true, Messages: count(tc.messages)})
		if tc.holding {
			fake.PutQueue("/", brokertest.Queue{Name: "orders.redeclaring", Durable: true, Messages: count(4)})
		}
		if tc.fault != nil {
			tc.fault(fake)
		}
		c, err := broker.New(broker.Config{Endpoint: fake.URL, AMQPEndpoint: "amqp://" + brokertest.ClosedAddr(t), Username: "u", Password: "p", RetryBudget: -1})
		if err != nil {
			t.Fatal(err)
		}
		w := want
		w.Name = target.queue
		err = redeclare(context.Background(), c, target, w, false, tc.keep)
		var interrupted *interruptedError
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.As(err, &interrupted) != tc.interrupted {
			t.Errorf("%s: %v; want an error with %q, interrupted %v", tc.name, err, tc.wantErr, tc.interrupted)
		}
		reqs := append(fake.RequestsMatching("DELETE"), fake.RequestsMatching("PUT")...)
		if strings.Join(reqs, "|") != strings.Join(tc.wantReqs, "|") {
			t.Errorf("%s: sent %q, want %q", tc.name, reqs, tc.wantReqs)
		}
		if q, ok := fake.Queue("/", "orders.redeclaring"); tc.holding && (!ok || *q.Messages != 4) {
			t.Errorf("%s: the holding queue was touched: %+v, %v", tc.name, q, ok)
		}
	}
}

// The plan warns of a change that declares q again, and of an interrupted
// change's holding queue that state records, each from one listing; it asks
// the broker nothing when neither applies, when the wanted table is unknown
// until apply, or when the broker settings are unknown or unset.
func TestWarnIfRedeclaring(t *testing.T) {
	t.Parallel()
	same, changed := replaceModel("5s", false), replaceModel("10s", false)
	unknown := same
	unknown.ArgumentsJSON = jsontypes.NewNormalizedUnknown()
	interrupted := same
	interrupted.Redeclaring = types.Int64Value(4)
	for _, tc := range []struct {
		name          string
		state, plan   queueModel
		brokerUnknown bool
		noEndpoint    bool
		want          []string // the warnings' summaries
	}{
		{name: "same table", state: same, plan: same},
		{name: "table unknown until apply", state: same, plan: unknown},
		{name: "new table", state: same, plan: changed, want: []string{"Queue Will Be Declared Again"}},
		{name: "interrupted change", state: interrupted, plan: same, want: []string{"Interrupted Change Found"}},
		{name: "new table, interrupted change", state: interrupted, plan: changed,
			want: []string{"Interrupted Change Found", "Queue Will Be Declared Again"}},
		{name: "broker settings unknown", state: interrupted, plan: changed, brokerUnknown: true},
		{name: "no endpoint", state: interrupted, plan: changed, noEndpoint: true},
	} {
		fake := brokertest.New(t)
		putIdle(fake, "orders", "orders.dead")
		if !tc.state.Redeclaring.IsNull() {
			fake.PutQueue("/", brokertest.Queue{Name: "orders.redeclaring", Durable: true, Messages: count(4)})
		}
		r := &queueResource{data: &providerData{suffixes: topology.DefaultSuffixes(), brokerUnknown: tc.brokerUnknown, endpointSet: !tc.noEndpoint,
			brokerConfig: broker.Config{Endpoint: fake.URL, Username: "u", Password: "p", RetryBudget: -1}}}
		var diags diag.Diagnostics
		r.warnIfRedeclaring(context.Background(), tc.state, tc.plan, &diags)
		var got []string
		for _, d := range diags {
			got = append(got, d.Summary())
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || diags.HasError() {
			t.Errorf("%s: %q, want warnings %q", tc.name, got, tc.want)
		}
		if n := len(fake.Requests()); (n > 0) != (len(tc.want) > 0) {
			t.Errorf("%s: %d requests to the broker %q", tc.name, n, fake.Requests())
		}
	}
}

// scriptedMover records what moveAside and moveBack ask of the broker; each
// move succeeds up to twice redeclareRounds (a loop that goes on fails
// there, at once), and the first refusals guarded deletes are refused as a
// queue a message landed on since.
type scriptedMover struct {
	refusals, moves int
	calls           []string
}

func (m *scriptedMover) DeclareQueue(_ context.Context, _, name string, _ map[string]any) error {
	m.calls = append(m.calls, "declare "+name)
	return nil
}

func (m *scriptedMover) RedriveDeadLetters(_ context.Context, r broker.Redrive) (int, error) {
	m.calls = append(m.calls, "move "+r.From+" to "+r.To)
	if m.moves++; m.moves > 2*redeclareRounds {
		return 0, errors.New("moved too many times")
	}
	return 1, nil
}

func (m *scriptedMover) DeleteQueue(_ context.Context, _, name string, guarded bool) error {
	if !guarded {
		m.calls = append(m.calls, "delete "+name+" unguarded")
		return nil
	}
	m.calls = append(m.calls, "delete "+name)
	if m.refusals > 0 {
		m.refusals--
		return fmt.Errorf("refused: %w", broker.ErrNotEmpty)
	}
	return nil
}

// A move aside (or back) is made again while the guarded delete of the queue
// it emptied is refused, redeclareRounds moves at most; then the move aside
// stops with an *interruptedError, or with force_destroy deletes q
// unguarded, and the move back stops with the refusal.
func TestMoveRounds(t *testing.T) {
	t.Parallel()
	aside := []string{"move orders to orders.redeclaring", "delete orders"}
	back := []string{"move orders.redeclaring to orders", "delete orders.redeclaring"}
	rounds := func(n int, round []string) []string {
		var out []string
		for range n {
			out = append(out, round...)
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		back, force bool
		refusals    int
		want        []string
		wantErr     string
	}{
		{name: "aside", want: append([]string{"declare orders.redeclaring"}, aside...)},
		{name: "aside, refused twice", refusals: 2, want: append([]string{"declare orders.redeclaring"}, rounds(3, aside)...)},
		{name: "aside, refused each time", refusals: 3, want: append([]string{"declare orders.redeclaring"}, rounds(3, aside)...),
			wantErr: "after its messages were moved to orders.redeclaring 3 times, RabbitMQ still refused to delete it"},
		{name: "aside, refused each time, force_destroy", refusals: 3, force: true,
			want: append(append([]string{"declare orders.redeclaring"}, rounds(3, aside)...), "delete orders unguarded")},
		{name: "back", back: true, want: back},
		{name: "back, refused twice", back: true, refusals: 2, want: rounds(3, back)},
		{name: "back, refused each time", back: true, refusals: 3, want: rounds(3, back), wantErr: "refused"},
	} {
		m := &scriptedMover{refusals: tc.refusals}
		var err error
		if tc.back {
			err = moveBack(context.Background(), m, ordersTarget)
		} else {
			err = moveAside(context.Background(), m, ordersTarget, tc.force)
		}
		var interrupted *interruptedError
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, broker.ErrNotEmpty)):
			t.Errorf("%s: %v, want a refusal with %q", tc.name, err, tc.wantErr)
		case tc.wantErr != "" && errors.As(err, &interrupted) == tc.back:
			t.Errorf("%s: %v: interrupted %v, want %v", tc.name, err, !tc.back, tc.back)
		}
		if strings.Join(m.calls, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: %q, want %q", tc.name, m.calls, tc.want)
		}
	}
}
