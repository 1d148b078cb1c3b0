package brokertest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// fakeAMQP is a management fake with queues q and q.dead in "/", its AMQP port, and a connection
// to that port as guest, closed when the test ends.
func fakeAMQP(t *testing.T) (*Server, *AMQP, *amqp.Connection) {
	t.Helper()
	s := New(t)
	s.PutQueue("/", Queue{Name: "q"})
	s.PutQueue("/", Queue{Name: "q.dead"})
	a := s.ServeAMQP(t)
	conn := orFatal(amqp.Dial("amqp://guest:pw@" + a.Addr()))(t) // vhost "/"
	t.Cleanup(func() { _ = conn.Close() })
	return s, a, conn
}

// orFatal takes the results of a call, v and err, and returns what gives v to a test, failing it
// with err when err is not nil: orFatal(conn.Channel())(t).
func orFatal[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// publish sends p to the queue key through ch and the default exchange, mandatory.
func publish(t *testing.T, ch *amqp.Channel, key string, p amqp.Publishing) *amqp.DeferredConfirmation {
	t.Helper()
	return orFatal(ch.PublishWithDeferredConfirm("", key, true, false, p))(t)
}

// waitConfirm waits up to 5 s for dc (failing the test with the deadline) and reports whether the
// broker acked it.
func waitConfirm(t *testing.T, dc *amqp.DeferredConfirmation) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	return orFatal(dc.WaitContext(ctx))(t)
}

// A message published over AMQP lands in its queue, counted by the
// management fake, and reaches a consumer with its properties and body
// unchanged; an ack removes it, a closed channel requeues what it did not
// ack, and a purge answers what it removed.
func TestAMQPPublishConsumeAckPurge(t *testing.T) {
	s, _, conn := fakeAMQP(t)
	pub := orFatal(conn.Channel())(t)
	if err := pub.Confirm(false); err != nil {
		t.Fatal(err)
	}
	sent := amqp.Publishing{MessageId: "m-1", UserId: "guest", ContentType: "text/plain", DeliveryMode: 2, Priority: 3,
		CorrelationId: "c", ReplyTo: "r", Expiration: "60000", Type: "t", AppId: "app", Timestamp: time.Unix(1700000000, 0),
		Headers: amqp.Table{"x-death": "one"}, Body: []byte(strings.Repeat("b", fakeFrameMax))}
	for i := range 3 {
		sent.MessageId = "m-" + string(rune('1'+i))
		if !waitConfirm(t, publish(t, pub, "q", sent)) {
			t.Fatal("nacked")
		}
	}
	if q, _ := s.Queue("/", "q"); q.Messages == nil || *q.Messages != 3 {
		t.Fatalf("management count %v, want 3", q.Messages)
	}
	if got := s.Messages("/", "q"); len(got) != 3 || got[0].ID() != "m-1" || got[0].UserID() != "guest" {
		t.Fatalf("stored %d, first %q", len(got), got[0].ID())
	}
	con := orFatal(conn.Channel())(t)
	if q, err := con.QueueDeclarePassive("q", true, false, false, false, nil); err != nil || q.Messages != 3 {
		t.Fatalf("declare-ok %+v, %v", q, err)
	}
	if err := con.Qos(2, 0, false); err != nil {
		t.Fatal(err)
	}
	ds := orFatal(con.Consume("q", "", false, false, false, false, nil))(t)
	d1, d2 := <-ds, <-ds
	sent.MessageId = "m-1"
	if d1.MessageId != "m-1" || d1.Priority != 3 || d1.Headers["x-death"] != "one" || string(d1.Body) != string(sent.Body) ||
		!d1.Timestamp.Equal(sent.Timestamp) || d1.AppId != "app" || d2.MessageId != "m-2" {
		t.Fatalf("delivered %+v", d1)
	}
	select {
	case d := <-ds:
		t.Fatalf("delivered %s beyond the prefetch of 2", d.MessageId)
	default:
	}
	if err := con.Ack(d1.DeliveryTag, false); err != nil {
		t.Fatal(err)
	}
	if d3 := <-ds; d3.MessageId != "m-3" {
		t.Fatalf("third delivery %q", d3.MessageId)
	}
	if err := con.Close(); err != nil { // m-2 and m-3 go back
		t.Fatal(err)
	}
	if got := s.Messages("/", "q"); len(got) != 2 || got[0].ID() != "m-2" {
		t.Fatalf("after the close, q holds %d", len(got))
	}
	n, err := pub.QueuePurge("q", false)
	if q, _ := s.Queue("/", "q"); err != nil || n != 2 || *q.Messages != 0 {
		t.Fatalf("purge: %d, %v; count %d", n, err, *q.Messages)
	}
}

// What RabbitMQ answers a mistake: a missing or refused queue closes the
// channel (404, 403), a mandatory publish to no queue is returned, a
// refused login and a missing vhost fail the handshake.
func TestAMQPRefusals(t *testing.T) {
	_, a, conn := fakeAMQP(t)
	var ae *amqp.Error
	if _, err := orFatal(conn.Channel())(t).QueueDeclarePassive("gone", true, false, false, false, nil); !errors.As(err, &ae) || ae.Code != 404 {
		t.Errorf("a missing queue: %v", err)
	}
	a.Refuse("/", "q")
	if _, err := orFatal(conn.Channel())(t).QueuePurge("q", false); !errors.As(err, &ae) || ae.Code != 403 {
		t.Errorf("a refused queue: %v", err)
	}
	pub := orFatal(conn.Channel())(t)
	_ = pub.Confirm(false)
	rets := pub.NotifyReturn(make(chan amqp.Return, 1))
	if !waitConfirm(t, publish(t, pub, "gone", amqp.Publishing{MessageId: "x"})) {
		t.Error("a returned publish is acked after its return")
	}
	if r := <-rets; r.ReplyCode != 312 || r.MessageId != "x" {
		t.Errorf("return %+v", r)
	}
	a.Login("guest", "right")
	if _, err := amqp.Dial("amqp://guest:wrong@" + a.Addr()); !errors.Is(err, amqp.ErrCredentials) {
		t.Errorf("a wrong password: %v", err)
	}
	if _, err := amqp.Dial("amqp://guest:right@" + a.Addr() + "/nowhere"); !errors.As(err, &ae) || ae.Code != 530 {
		t.Errorf("a missing vhost: %v", err)
	}
	if got := a.Logins(); len(got) != 3 || got[2] != [2]string{"guest", "right"} {
		t.Errorf("logins %v", got)
	}
}

// OnPublish decides each publish: nacked, returned, held until
// ReleaseConfirms, the connection closed.
func TestAMQPPublishFaults(t *testing.T) {
	s, a, conn := fakeAMQP(t)
	faults := map[int]PublishFault{1: Nack, 2: Return, 3: Hold, 5: CloseConnection}
	a.OnPublish(func(n int, p Publish) PublishFault {
		if p.RoutingKey != "q" || !p.Mandatory {
			t.Errorf("publish %d: %+v", n, p)
		}
		return faults[n]
	})
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	pub := orFatal(conn.Channel())(t)
	_ = pub.Confirm(false)
	rets := pub.NotifyReturn(make(chan amqp.Return, 1))
	if waitConfirm(t, publish(t, pub, "q", amqp.Publishing{})) {
		t.Error("publish 1 acked, want a nack")
	}
	if !waitConfirm(t, publish(t, pub, "q", amqp.Publishing{MessageId: "r"})) || (<-rets).MessageId != "r" {
		t.Error("publish 2 not returned")
	}
	held := publish(t, pub, "q", amqp.Publishing{MessageId: "h"})
	if !waitConfirm(t, publish(t, pub, "q", amqp.Publishing{MessageId: "4"})) {
		t.Error("publish 4 nacked")
	}
	select {
	case <-held.Done():
		t.Fatal("the held confirm came before ReleaseConfirms")
	default:
	}
	a.ReleaseConfirms()
	if !waitConfirm(t, held) {
		t.Error("the held publish nacked")
	}
	if got := s.Messages("/", "q"); len(got) != 2 || got[0].ID() != "h" {
		t.Errorf("q holds %d", len(got))
	}
	_, _ = pub.PublishWithDeferredConfirm("", "q", true, false, amqp.Publishing{})
	if e := <-closed; e == nil || e.Code != 320 {
		t.Errorf("connection closed with %v, want 320", e)
	}
}

// CloseChannel closes the publishing channel alone: the publish is dropped,
// and the connection's other channels go on.
func TestAMQPCloseChannel(t *testing.T) {
	s, a, conn := fakeAMQP(t)
	a.OnPublish(func(int, Publish) PublishFault { return CloseChannel })
	pub := orFatal(conn.Channel())(t)
	closed := pub.NotifyClose(make(chan *amqp.Error, 1))
	_ = pub.Confirm(false)
	dc := publish(t, pub, "q", amqp.Publishing{})
	if e := <-closed; e == nil || e.Code != 406 {
		t.Errorf("channel closed with %v, want 406", e)
	}
	if waitConfirm(t, dc) || len(s.Messages("/", "q")) != 0 {
		t.Error("the refused publish was confirmed or routed")
	}
	if _, err := orFatal(conn.Channel())(t).QueueDeclarePassive("q", true, false, false, false, nil); err != nil {
		t.Errorf("the connection did not go on: %v", err)
	}
}

// Hang leaves the connection open and silent until Unhang closes it.
func TestAMQPHang(t *testing.T) {
	_, a, conn := fakeAMQP(t)
	hung := make(chan struct{})
	a.OnPublish(func(int, Publish) PublishFault { close(hung); return Hang })
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	pub := orFatal(conn.Channel())(t)
	_ = pub.Confirm(false)
	dc := publish(t, pub, "q", amqp.Publishing{})
	<-hung
	select {
	case <-dc.Done():
		t.Fatal("a hung connection confirmed")
	case e := <-closed:
		t.Fatalf("a hung connection closed: %v", e)
	default:
	}
	a.Unhang()
	if e := <-closed; e == nil {
		t.Error("Unhang closed the connection as the client's own close")
	}
}

// HoldConfirmsUntil sends every confirm only once the publish it names is
// handled, after that publish's return.
func TestAMQPHoldConfirmsUntil(t *testing.T) {
	_, a, conn := fakeAMQP(t)
	a.HoldConfirmsUntil(2)
	pub := orFatal(conn.Channel())(t)
	_ = pub.Confirm(false)
	rets := pub.NotifyReturn(make(chan amqp.Return, 2))
	first := publish(t, pub, "gone", amqp.Publishing{MessageId: "1"})
	if _, err := pub.QueueDeclarePassive("q", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	select { // the fake answered the declare after publish 1: its confirm would have come first
	case <-first.Done():
		t.Fatal("confirm 1 came before publish 2")
	default:
	}
	second := publish(t, pub, "gone", amqp.Publishing{MessageId: "2"})
	if !waitConfirm(t, first) || !waitConfirm(t, second) || len(rets) != 2 {
		t.Errorf("after publish 2: confirms %v %v, %d returns", first.Acked(), second.Acked(), len(rets))
	}
}

// A consumer whose queue is deleted is cancelled: its deliveries end.
func TestAMQPConsumerCancelled(t *testing.T) {
	s, _, conn := fakeAMQP(t)
	con := orFatal(conn.Channel())(t)
	cancels := con.NotifyCancel(make(chan string, 1))
	ds := orFatal(con.Consume("q", "", false, false, false, false, nil))(t)
	s.RemoveQueue("/", "q")
	if _, err := orFatal(conn.Channel())(t).QueueDeclarePassive("q.dead", true, false, false, false, nil); err != nil {
		t.Fatal(err) // a frame: the fake looks at its consumers after it
	}
	if _, ok := <-ds; ok || len(<-cancels) == 0 {
		t.Error("the consumer of a deleted queue was not cancelled")
	}
}
