package mover

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// redrive moves q.dead to q with the progress reports it made.
func redrive(ctx context.Context, c *Mover, limit int) (int, []int, error) {
	var progress []int
	n, err := c.Move(ctx, Move{Vhost: "/", From: "q.dead", To: "q", Limit: limit,
		Progress: func(moved, total int) { progress = append(progress, moved, total) }})
	return n, progress, err
}

// Every message moves, in order, with its properties and body unchanged,
// through a full window and beyond the prefetch; progress is told along the
// way and at the end; the management API counts them on q.
func TestRedrive_movesEveryMessageUnchanged(t *testing.T) {
	const total = 2*Window + progressEvery/2
	c, s, _ := fakeBroker(t, total)
	sent := deadLetters(total)
	n, progress, err := redrive(context.Background(), c, 0)
	if err != nil || n != total {
		t.Fatalf("moved %d, %v; want %d", n, err, total)
	}
	got := s.Messages("/", "q")
	if len(got) != total || len(s.Messages("/", "q.dead")) != 0 {
		t.Fatalf("q holds %d, q.dead %d; want %d and 0", len(got), len(s.Messages("/", "q.dead")), total)
	}
	for i, m := range got {
		if !bytes.Equal(m.Props, sent[i].Props) || !bytes.Equal(m.Body, sent[i].Body) {
			t.Fatalf("message %d arrived as %q %q, sent as %q %q", i, m.Props, m.Body, sent[i].Props, sent[i].Body)
		}
	}
	if q, _ := s.Queue("/", "q"); *q.Messages != total {
		t.Errorf("the management API counts %d on q", *q.Messages)
	}
	// Acks cover runs of confirms, at most a window each: one report
	// between progressEvery and progressEvery+Window, one at the end.
	if len(progress) != 4 || progress[0] < progressEvery || progress[0] >= progressEvery+Window ||
		progress[1] != total || progress[2] != total || progress[3] != total {
		t.Errorf("progress %v, want one report past %d of %d, then %d of %d", progress, progressEvery, total, total, total)
	}
}

// Limit caps the move: the first Limit go, the rest stay in order. An empty
// q.dead moves nothing and publishes nothing.
func TestRedrive_limitAndEmpty(t *testing.T) {
	c, s, a := fakeBroker(t, 0)
	publishes := 0
	a.OnPublish(func(int, brokertest.Publish) brokertest.PublishFault { publishes++; return brokertest.Route })
	if n, progress, err := redrive(context.Background(), c, 0); n != 0 || err != nil || progress != nil || publishes != 0 {
		t.Fatalf("an empty q.dead: moved %d, %v, progress %v, %d publishes", n, err, progress, publishes)
	}
	s.PutMessages("/", "q.dead", deadLetters(10)...)
	n, _, err := redrive(context.Background(), c, 4)
	if err != nil || n != 4 || publishes != 4 {
		t.Fatalf("limit 4: moved %d (%d publishes), %v", n, publishes, err)
	}
	if got := ids(s.Messages("/", "q.dead")); !slices.Equal(got, ids(deadLetters(10)[4:])) {
		t.Errorf("q.dead holds %v", got)
	}
	if got := ids(s.Messages("/", "q")); !slices.Equal(got, ids(deadLetters(4))) {
		t.Errorf("q holds %v", got)
	}
}

// A missing or refused queue stops the move before it begins, naming it.
func TestRedrive_queueMistakes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		arrange  func(*brokertest.Server, *brokertest.AMQP)
		kind     error
		cause    Cause
		op, says string
		counted  bool
	}{
		{"no q.dead", func(s *brokertest.Server, _ *brokertest.AMQP) { s.RemoveQueue("/", "q.dead") }, ErrNotFound, noCause,
			`counting the messages of "q.dead"`, `queue "q.dead" does not exist in vhost "/"`, false},
		{"no q", func(s *brokertest.Server, _ *brokertest.AMQP) { s.RemoveQueue("/", "q") }, ErrNotFound, noCause,
			`looking up "q"`, `queue "q" does not exist in vhost "/"`, false},
		{"q.dead refused", func(_ *brokertest.Server, a *brokertest.AMQP) { a.Refuse("/", "q.dead") }, ErrUnauthorized, QueuePermission,
			`consuming from "q.dead"`, "ACCESS_REFUSED", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, s, a := fakeBroker(t, 1)
			tc.arrange(s, a)
			_, _, err := redrive(context.Background(), c, 0)
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.op) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want kind %v, %q, saying %q", err, tc.kind, tc.op, tc.says)
			}
			// Once q.dead is counted, a failure is a move of 0 that says all stay.
			var ae *Error
			var me *MoveError
			switch {
			case tc.counted && (!errors.As(err, &me) || me.Moved != 0 || me.Total != 1 || me.URL != a.URL() || me.Cause != tc.cause):
				t.Errorf("got %v, want a *MoveError: moved 0 of 1 at %s", err, a.URL())
			case !tc.counted && (!errors.As(err, &ae) || !strings.HasPrefix(ae.Op, tc.op) || ae.URL != a.URL() || ae.Cause != tc.cause ||
				ae.Connecting):
				t.Errorf("got %v, want an *Error at %s, %q", err, a.URL(), tc.op)
			}
		})
	}
}

// The move never acknowledges a message before its copy is confirmed: a
// publish nacked, returned, or cut off by a closed connection leaves it and
// every later one on q.dead, and the error counts what moved. Nothing is
// lost: every message is on q.dead or q.
func TestRedrive_neverAcksBeforeTheConfirm(t *testing.T) {
	const total, failing = 40, 7
	for _, tc := range []struct {
		fault brokertest.PublishFault
		kind  error
		// exact: moved is exactly the publishes before the failing one (a
		// return may come before the confirm of the publish ahead of it,
		// and an ack sent as the broker closes the connection is lost).
		exact bool
		says  string
	}{
		{brokertest.Nack, errNotConfirmed, true, "the broker nacked a publish to q"},
		{brokertest.Return, errReturned, false, `the broker returned message "m-6" as unroutable (312 NO_ROUTE)`},
		{brokertest.CloseConnection, errConnectionLost, false, "the AMQP connection closed: CONNECTION_FORCED"},
	} {
		t.Run(tc.kind.Error(), func(t *testing.T) {
			c, s, a := fakeBroker(t, total)
			a.OnPublish(atPublish(failing, tc.fault, func() {}))
			n, _, err := redrive(context.Background(), c, 0)
			var me *MoveError
			if !errors.As(err, &me) || !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want a *MoveError of kind %v saying %q", err, tc.kind, tc.says)
			}
			if me.Moved != n || me.Total != total || (tc.exact && n != failing-1) || n > failing-1 {
				t.Errorf("moved %d (error: %d of %d), want %d of %d", n, me.Moved, me.Total, failing-1, total)
			}
			checkNoLoss(t, s, total, n, tc.exact)
		})
	}
}

// q.dead deleted mid-move: RabbitMQ cancels the consumer, and the move
// stops once what was delivered before is settled, saying so.
func TestRedrive_sourceDeleted(t *testing.T) {
	const total, deleted = prefetch + 10, 5
	c, s, a := fakeBroker(t, total)
	a.OnPublish(atPublish(deleted, brokertest.Route, func() { s.RemoveQueue("/", "q.dead") }))
	n, _, err := redrive(context.Background(), c, 0)
	if !errors.Is(err, errConnectionLost) || !strings.Contains(err.Error(), "RabbitMQ cancelled the consumer of q.dead") {
		t.Fatalf("moved %d, %v; want errConnectionLost saying the consumer was cancelled", n, err)
	}
	if copied := ids(s.Messages("/", "q")); !slices.Equal(copied, ids(deadLetters(total))[:len(copied)]) || n > len(copied) {
		t.Errorf("moved %d, and q holds %d out of order", n, len(copied))
	}
}

// The publishing channel closed alone (the connection open): the move
// stops, with every message not confirmed before on q.dead.
func TestRedrive_channelClosed(t *testing.T) {
	const total, failing = 20, 7
	c, s, a := fakeBroker(t, total)
	a.OnPublish(atPublish(failing, brokertest.CloseChannel, func() {}))
	n, _, err := redrive(context.Background(), c, 0)
	if !errors.Is(err, errConnectionLost) || n > failing-1 {
		t.Fatalf("moved %d, %v; want at most %d and errConnectionLost", n, err, failing-1)
	}
	checkNoLoss(t, s, total, n, false)
}

// q deleted mid-move: the publishes to it, mandatory, come back, and the
// move stops with every message not confirmed before on q.dead.
func TestRedrive_destinationDeleted(t *testing.T) {
	const total, deleted = 20, 5
	c, s, a := fakeBroker(t, total)
	a.OnPublish(atPublish(deleted, brokertest.Route, func() { s.RemoveQueue("/", "q") }))
	n, _, err := redrive(context.Background(), c, 0)
	if !errors.Is(err, errReturned) || !strings.Contains(err.Error(), `queue "q" is gone`) || n > deleted-1 {
		t.Fatalf("moved %d, %v; want at most %d and errReturned", n, err, deleted-1)
	}
	if stayed := ids(s.Messages("/", "q.dead")); !slices.Equal(stayed, ids(deadLetters(total))[n:]) {
		t.Errorf("moved %d, and q.dead holds %v", n, stayed)
	}
}

// A full window of publishes returned, their confirms only after the last
// return: the returns never stall the connection's reader (amqp091-go
// waits 5 s on a full notification channel, then drops the return), and the
// move stops at once with errReturned, moving nothing.
func TestRedrive_fullWindowReturned(t *testing.T) {
	const total = Window + 10
	c, s, a := fakeBroker(t, total)
	a.OnPublish(func(int, brokertest.Publish) brokertest.PublishFault { return brokertest.Return })
	a.HoldConfirmsUntil(Window)
	start := time.Now()
	n, _, err := redrive(context.Background(), c, 0)
	if !errors.Is(err, errReturned) || n != 0 {
		t.Fatalf("moved %d, %v; want 0 and errReturned", n, err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %s: the returns stalled the connection", took)
	}
	checkNoLoss(t, s, total, 0, true)
}

// A publish whose confirm never comes is never acknowledged: the move,
// interrupted while it waits, leaves that message and the later ones on
// q.dead.
func TestRedrive_confirmNeverCame(t *testing.T) {
	const total = 5
	c, s, a := fakeBroker(t, total)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.OnPublish(func(n int, _ brokertest.Publish) brokertest.PublishFault {
		if n == total {
			cancel()
		}
		if n == 2 {
			return brokertest.Hold
		}
		return brokertest.Route
	})
	n, progress, err := redrive(ctx, c, 0)
	var me *MoveError
	if !errors.As(err, &me) || !errors.Is(err, context.Canceled) || n > 1 || me.Moved != n || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("moved %d, %v; want at most 1 and an interrupted *MoveError", n, err)
	}
	if progress != nil {
		t.Errorf("progress told after the interrupt: %v", progress)
	}
	checkNoLoss(t, s, total, n, true)
}

// A broker that stops answering mid-move: an interrupt ends the move at
// once, and closing the connection waits no longer than closeWait.
func TestRedrive_brokerStopsAnswering(t *testing.T) {
	c, _, a := fakeBroker(t, 3)
	c.closeWait = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.OnPublish(func(n int, _ brokertest.Publish) brokertest.PublishFault {
		if n == 2 {
			cancel()
			return brokertest.Hang
		}
		return brokertest.Route
	})
	start := time.Now()
	n, _, err := redrive(ctx, c, 0)
	if !errors.Is(err, context.Canceled) || n > 1 {
		t.Errorf("moved %d, %v; want at most 1 and context.Canceled", n, err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %s: the close waited past closeWait", took)
	}
}

// A message published by another user stops the move before it is
// published (RabbitMQ would close the channel), after the ones before it
// moved; a user with the impersonator tag moves it.
func TestRedrive_foreignUser(t *testing.T) {
	c, s, a := fakeBroker(t, 2)
	s.PutMessages("/", "q.dead", brokertest.NewMessage("m-2", "mallory", ""), brokertest.NewMessage("m-3", "", ""))
	n, _, err := redrive(context.Background(), c, 0)
	if !errors.Is(err, errForeignUser) || n != 2 || !strings.Contains(err.Error(), `user_id "mallory"`) ||
		!strings.Contains(err.Error(), `the connecting user "guest"`) {
		t.Fatalf("moved %d, %v; want 2 and errForeignUser", n, err)
	}
	if got := ids(s.Messages("/", "q.dead")); !slices.Equal(got, []string{"m-2", "m-3"}) {
		t.Fatalf("q.dead holds %v", got)
	}
	c.cfg.Whoami = func(context.Context) (string, bool) { return "guest", true }
	a.Impersonator("guest")
	if n, _, err := redrive(context.Background(), c, 0); n != 2 || err != nil {
		t.Errorf("an impersonator: moved %d, %v; want 2", n, err)
	}
}

// The end of the deliveries is a cancel only when the broker sent one: a
// channel or connection that closes also closes the cancel notifications,
// and then the connection's reason is the event.
func TestRedrive_deliveriesEnded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel bool
		want   moveEvent
	}{
		{"cancelled", true, moveChannelClosed{Reason: "RabbitMQ cancelled the consumer of q.dead: the queue's node went down, " +
			"or the queue was deleted (acknowledgements sent just before may not have reached it: the last messages " +
			"counted moved may also still be there, as duplicates)"}},
		{"connection closed", false, moveConnectionClosed{Reason: "CONNECTION_FORCED"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &moveLoop{mv: Move{From: "q.dead"}, cancels: make(chan string, 1), closed: make(chan *amqp.Error, 1)}
			if tc.cancel {
				m.cancels <- "ctag"
			} else {
				close(m.cancels)
			}
			m.closed <- &amqp.Error{Reason: "CONNECTION_FORCED"}
			if got := m.deliveriesEnded(); got != tc.want {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}
