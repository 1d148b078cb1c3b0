package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

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
		{name: "consumer", main: brokertest.Queue{Consumers: 2, Messages: brokertest.Count(0)}, keep: true,
			wantWhy: refuseConsumers,
			wantErr: []string{`Queue "orders" in vhost "/" was not changed`, `{"x-max-priority":10}`, "it has 2 consumers", "Stop the application"}},
		{name: "busy hold queue", main: brokertest.Queue{Messages: brokertest.Count(0)}, keep: true, wantWhy: refuseHolds,
			hold:    &brokertest.Queue{Name: "orders.deferred.30000", Messages: brokertest.Count(3)},
			wantErr: []string{"orders.deferred.30000: 3 messages, 0 consumers", "at most 30s (its TTL)"}},
		{name: "not running", main: brokertest.Queue{State: "down", Node: "rabbit@n2", Messages: brokertest.Count(0)}, keep: true,
			wantWhy: refuseNotRunning,
			wantErr: []string{"orders on node rabbit@n2: state down", "rabbitmqctl"}},
		{name: "messages", main: brokertest.Queue{Messages: brokertest.Count(1204)}, wantWhy: refuseMessages,
			wantErr: []string{"it holds 1204 messages", "keep_messages_on_change = true", "orders.redeclaring", "force_destroy = true"}},
		{name: "empty", main: brokertest.Queue{Messages: brokertest.Count(0)},
			hold:        &brokertest.Queue{Name: "orders.deferred.30000", Messages: brokertest.Count(0)},
			wantDeletes: []string{"DELETE queues / orders ?if-empty=true&if-unused=true"}},
		{name: "force_destroy", main: brokertest.Queue{Consumers: 1, Messages: brokertest.Count(7)}, force: true,
			hold:        &brokertest.Queue{Name: "orders.deferred.30000", Messages: brokertest.Count(3)},
			wantDeletes: []string{"DELETE queues / orders"}},
	} {
		fake := brokertest.New(t)
		tc.main.Name, tc.main.Durable = "orders", true
		fake.PutQueue("/", tc.main)
		fake.PutQueue("/", brokertest.Queue{Name: "orders.dead", Durable: true, Messages: brokertest.Count(5)})
		if tc.hold != nil {
			fake.PutQueue("/", *tc.hold)
		}
		err := redeclare(context.Background(), fakeBrokerMover(t, fake), ordersTarget, want, tc.force, tc.keep)
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
		case tc.wantWhy == refuseNone && (strings.Join(puts, "|") != "PUT queues / orders" || len(declaredArgs(q)) != 1):
			t.Errorf("%s: declared %q, orders now %+v; want orders alone, with the new arguments", tc.name, puts, q)
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
		fake.PutQueue("/", brokertest.Queue{Name: target.queue, Durable: true, Messages: brokertest.Count(tc.messages)})
		if tc.holding {
			fake.PutQueue("/", brokertest.Queue{Name: "orders.redeclaring", Durable: true, Messages: brokertest.Count(4)})
		}
		if tc.fault != nil {
			tc.fault(fake)
		}
		c := fakeBrokerMover(t, fake)
		w := want
		w.Name = target.queue
		err := redeclare(context.Background(), c, target, w, false, tc.keep)
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

// A move aside (or back) is made again while the guarded delete of the queue
// it emptied is refused, redeclareRounds moves at most; then the move aside
// stops with an *interruptedError, or with force_destroy deletes q
// unguarded, and the move back stops with the refusal. On the fake with its
// AMQP port: each refused delete finds a message that landed since its move,
// which the next move takes along.
func TestMoveRounds(t *testing.T) {
	t.Parallel()
	const guarded = " ?if-empty=true&if-unused=true"
	declare, aside, back := "PUT queues / orders.redeclaring", "DELETE queues / orders"+guarded, "DELETE queues / orders.redeclaring"+guarded
	for _, tc := range []struct {
		name        string
		back, force bool
		refusals    int32
		want        []string // the PUTs and DELETEs, in order
		wantErr     string
	}{
		{name: "aside", want: []string{declare, aside}},
		{name: "aside, refused twice", refusals: 2, want: append([]string{declare}, slices.Repeat([]string{aside}, 3)...)},
		{name: "aside, refused each time", refusals: 3, want: append([]string{declare}, slices.Repeat([]string{aside}, 3)...),
			wantErr: "after its messages were moved to orders.redeclaring 3 times, RabbitMQ still refused to delete it"},
		{name: "aside, refused each time, force_destroy", refusals: 3, force: true,
			want: append([]string{declare}, append(slices.Repeat([]string{aside}, 3), "DELETE queues / orders")...)},
		{name: "back", back: true, want: []string{back}},
		{name: "back, refused twice", back: true, refusals: 2, want: slices.Repeat([]string{back}, 3)},
		{name: "back, refused each time", back: true, refusals: 3, want: slices.Repeat([]string{back}, 3),
			wantErr: brokertest.NotEmptyReason("/", "orders.redeclaring")},
	} {
		fake := brokertest.New(t)
		from, to := "orders", "orders.redeclaring"
		if tc.back {
			from, to = to, from
			putIdle(fake, to)
		}
		putIdle(fake, from)
		fake.PutMessages("/", from, brokertest.NewMessage("m-0", "u", "first"))
		refusals := atomic.Int32{}
		refusals.Store(tc.refusals)
		fake.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
			if r.URL.Query().Get("if-empty") == "true" && refusals.Add(-1) >= 0 {
				fake.PutMessages("/", path.Base(r.URL.Path), brokertest.NewMessage("late", "u", "since the move"))
			}
			return false
		})
		c := fakeBrokerClient(t, fake)
		m := brokerMover{c, moverOf(t, c, fake.ServeAMQP(t).URL())}
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
		if reqs := slices.DeleteFunc(fake.Requests(), func(r string) bool { return strings.HasPrefix(r, "GET ") }); !slices.Equal(reqs, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, reqs, tc.want)
		}
		if got, want := len(fake.Messages("/", to)), int(min(tc.refusals, redeclareRounds-1))+1; got != want {
			t.Errorf("%s: %s holds %d messages, want %d: one a move", tc.name, to, got, want)
		}
	}
}
