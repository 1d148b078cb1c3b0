package provider

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// The contract of the fake's AMQP 0-9-1 port (internal/brokertest), which
// the mover's unit tests (internal/mover) believe: each row is something the
// mover does over amqp091-go and what RabbitMQ answers it. The rows run with
// the management API's (runContract), on the fake (TestFakeContract) and on
// the acceptance tests' broker (TestAccFakeContract), so that the fake cannot
// answer otherwise than a broker does unnoticed.
//
// What the mover does not do has no row, and the fake does not do it either
// (it answers 540 NOT_IMPLEMENTED): queue.declare other than passive (and so
// a declaration's 406 on different arguments), basic.get, basic.nack and
// basic.reject from the client, queue.delete over AMQP, exchanges other than
// the default one, a close from the management API (320 CONNECTION_FORCED is
// a fault a test injects: OnPublish). RabbitMQ may ack several publishes in
// one basic.ack (multiple); amqp091-go confirms each tag, which is what the
// rows see.

// amqpEnv is what an AMQP row runs with (runContract): its vhost and queue
// (durable, classic, no arguments), the vhost's AMQP URL, logging in as the
// broker's user, and a connection to it, closed at the end of the row.
type amqpEnv struct {
	b            contractBroker
	vhost, queue string
	url          string
	conn         *amqp.Connection
}

// ready is the count of ready messages a passive declare of the row's queue
// answers, on a connection of its own.
func (e amqpEnv) ready(t *testing.T) int {
	t.Helper()
	return orFatal(amqpChannelAt(t, e.url).QueueDeclarePassive(e.queue, true, false, false, false, nil))(t).Messages
}

// consume consumes the row's queue on ch with manual acknowledgements.
func (e amqpEnv) consume(t *testing.T, ch *amqp.Channel) <-chan amqp.Delivery {
	t.Helper()
	return orFatal(ch.Consume(e.queue, "contract-consumer", false, false, false, false, nil))(t)
}

// receive waits for the next value of c: the broker sends it without being
// asked again, so the wait is a bound for a broken broker, not a race.
func receive[T any](t *testing.T, c <-chan T, what string) (v T) {
	t.Helper()
	ok := false
	select {
	case v, ok = <-c:
	case <-time.After(10 * time.Second):
	}
	if !ok {
		t.Fatalf("no %s within 10s, or its channel closed", what)
	}
	return v
}

// delivered receives the deliveries of message from to message to-1 that
// come next on d, checking their bodies and order, and returns them.
func delivered(t *testing.T, d <-chan amqp.Delivery, from, to int) []amqp.Delivery {
	t.Helper()
	all := make([]amqp.Delivery, to-from)
	for i := range all {
		if all[i] = receive(t, d, "a delivery"); string(all[i].Body) != fmt.Sprintf("message %d", from+i) {
			t.Errorf("delivered %q, want message %d", all[i].Body, from+i)
		}
	}
	return all
}

// wantClose checks that err is a channel or connection close with code and
// reason.
func wantClose(t *testing.T, err error, code int, reason string) {
	t.Helper()
	if ae, ok := errors.AsType[*amqp.Error](err); !ok || ae.Code != code || ae.Reason != reason {
		t.Errorf("got %v, want a close %d %q", err, code, reason)
	}
}

// amqpRows are the behaviours of RabbitMQ the mover relies on (internal/mover: dial.go, move.go,
// purge.go).
var amqpRows = []contractRow{
	{name: "connection and channel open, close-ok", declare: declNone, run: func(t *testing.T, e amqpEnv) {
		orFatal(e.conn.Channel())(t)
		if err := e.conn.Close(); err != nil {
			t.Errorf("connection.close: %v", err)
		}
	}},
	{name: "login refused", declare: declNone, run: func(t *testing.T, e amqpEnv) {
		u := orFatal(url.Parse(e.url))(t)
		u.User = url.UserPassword(u.User.Username(), "not-the-password")
		// Without authentication_failure_close among amqp091-go's capabilities,
		// RabbitMQ closes the socket without a word: the client says ErrCredentials.
		_, err := amqp.DialConfig(u.String(), amqp.Config{Dial: amqp.DefaultDial(10 * time.Second)})
		if !errors.Is(err, amqp.ErrCredentials) {
			t.Errorf("got %v, want amqp.ErrCredentials", err)
		}
	}},
	{name: "vhost refused", declare: declNone, run: func(t *testing.T, e amqpEnv) {
		e.vhost += "-none"
		_, err := amqp.DialConfig(e.b.amqpURL(e.vhost), amqp.Config{Dial: amqp.DefaultDial(10 * time.Second)})
		wantClose(t, err, amqp.NotAllowed, "NOT_ALLOWED - vhost "+e.vhost+" not found")
	}},
	{name: "passive declare counts the ready messages", declare: declNone, messages: 3, run: func(t *testing.T, e amqpEnv) {
		q := orFatal(amqpChannelAt(t, e.url).QueueDeclarePassive(e.queue, true, false, false, false, nil))(t)
		if q.Name != e.queue || q.Messages != 3 {
			t.Errorf("declare-ok %q with %d messages, want %q with 3", q.Name, q.Messages, e.queue)
		}
	}},
	{name: "passive declare of a missing queue closes the channel 404", declare: declNone, run: func(t *testing.T, e amqpEnv) {
		ch := orFatal(e.conn.Channel())(t)
		_, err := ch.QueueDeclarePassive("contract-missing", true, false, false, false, nil)
		wantClose(t, err, amqp.NotFound, fmt.Sprintf("NOT_FOUND - no queue 'contract-missing' in vhost '%s'", e.vhost))
		if !ch.IsClosed() {
			t.Error("the channel is still open")
		}
		// The connection stays open.
		if _, err := orFatal(e.conn.Channel())(t).QueueDeclarePassive(e.queue, true, false, false, false, nil); err != nil {
			t.Errorf("another channel of the connection: %v", err)
		}
	}},
	{name: "publisher confirms ack each publish by its tag", declare: declNone, run: func(t *testing.T, e amqpEnv) {
		ch := amqpChannelAt(t, e.url)
		if err := ch.Confirm(false); err != nil {
			t.Fatal(err)
		}
		// RabbitMQ may ack several publishes in one basic.ack (multiple);
		// amqp091-go confirms each of them, so the mover sees one per tag.
		var dcs []*amqp.DeferredConfirmation
		for i := range 3 {
			dc, err := ch.PublishWithDeferredConfirm("", e.queue, true, false, amqp.Publishing{Body: fmt.Appendf(nil, "message %d", i)})
			if err != nil {
				t.Fatal(err)
			}
			dcs = append(dcs, dc)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for i, dc := range dcs {
			if _, err := dc.WaitContext(ctx); err != nil {
				t.Fatalf("confirm of tag %d: %v", i+1, err)
			}
			if dc.DeliveryTag != uint64(i+1) || !dc.Acked() {
				t.Errorf("confirm of tag %d acked %v, want tag %d acked", dc.DeliveryTag, dc.Acked(), i+1)
			}
		}
		if n := e.ready(t); n != 3 {
			t.Errorf("%d ready, want 3", n)
		}
	}},
	{name: "mandatory publish to a missing queue is returned, then acked", declare: declNone, run: func(t *testing.T, e amqpEnv) {
		ch := amqpChannelAt(t, e.url)
		if err := ch.Confirm(false); err != nil {
			t.Fatal(err)
		}
		// Unbuffered: amqp091-go's reader waits on the first of the two until
		// it is taken, so which comes first is the order of the frames. The
		// return must: the mover reads the returns once the confirm is in.
		returns := ch.NotifyReturn(make(chan amqp.Return))
		confirms := ch.NotifyPublish(make(chan amqp.Confirmation))
		if err := ch.PublishWithContext(context.Background(), "", "contract-missing", true, false,
			amqp.Publishing{MessageId: "m-1", Body: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-returns:
			if r.ReplyCode != 312 || r.ReplyText != "NO_ROUTE" || r.Exchange != "" || r.RoutingKey != "contract-missing" ||
				r.MessageId != "m-1" || string(r.Body) != "x" {
				t.Errorf("returned %d %q exchange %q key %q id %q body %q, want 312 NO_ROUTE, default exchange, "+
					"contract-missing, m-1, x", r.ReplyCode, r.ReplyText, r.Exchange, r.RoutingKey, r.MessageId, r.Body)
			}
		case c := <-confirms:
			t.Fatalf("confirm %+v before the return", c)
		case <-time.After(10 * time.Second):
			t.Fatal("no return within 10s")
		}
		if c := receive(t, confirms, "a confirm"); c.DeliveryTag != 1 || !c.Ack {
			t.Errorf("confirm %+v, want tag 1 acked", c)
		}
	}},
	{name: "publish with another user's user_id closes the channel 406", declare: declNone, run: func(t *testing.T, e amqpEnv) {
		ch := amqpChannelAt(t, e.url)
		closed := ch.NotifyClose(make(chan *amqp.Error, 1))
		if err := ch.PublishWithContext(context.Background(), "", e.queue, true, false,
			amqp.Publishing{UserId: "contract-mallory", Body: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		wantClose(t, receive(t, closed, "the channel's close"), amqp.PreconditionFailed,
			fmt.Sprintf("PRECONDITION_FAILED - user_id property set to 'contract-mallory' but authenticated user was '%s'", e.b.user))
		if n := e.ready(t); n != 0 {
			t.Errorf("%d ready, want the publish dropped: 0", n)
		}
	}},
	{name: "message properties and headers kept", declare: declNone, run: func(t *testing.T, e amqpEnv) {
		ts := time.Unix(1767225600, 0) // amqp091-go reads a timestamp in time.Local
		// Priority 0 is left out of the properties by amqp091-go itself
		// (a zero field is not sent), and read back as 0: the second message
		// holds no priority on the wire.
		sent := []amqp.Publishing{{
			Headers: amqp.Table{"x-death-count": int64(2), "s": "text", "b": true, "i": int32(-7), "f": 1.5,
				"t": amqp.Table{"nested": "yes"}, "a": []any{"one", int64(2)}, "ts": ts, "bytes": []byte{0, 1}},
			ContentType: "application/json", ContentEncoding: "gzip", DeliveryMode: amqp.Persistent, Priority: 5,
			CorrelationId: "corr", ReplyTo: "reply", Expiration: "3600000", MessageId: "m-1", Timestamp: ts,
			Type: "kind", UserId: e.b.user, AppId: "app", Body: []byte(`{"a":1}`),
		}, {MessageId: "m-2", Priority: 0, DeliveryMode: amqp.Transient, Body: []byte("two")}}
		pub := amqpChannelAt(t, e.url)
		publishConfirmed(t, pub, e.queue, len(sent), func(i int) amqp.Publishing { return sent[i] })
		d := e.consume(t, amqpChannelAt(t, e.url))
		for i, want := range sent {
			got := receive(t, d, "a delivery")
			if got.DeliveryTag != uint64(i+1) || got.Redelivered || got.Exchange != "" || got.RoutingKey != e.queue ||
				got.ConsumerTag != "contract-consumer" {
				t.Errorf("delivery %d: tag %d redelivered %v exchange %q key %q consumer %q", i, got.DeliveryTag,
					got.Redelivered, got.Exchange, got.RoutingKey, got.ConsumerTag)
			}
			back := amqp.Publishing{Headers: got.Headers, ContentType: got.ContentType, ContentEncoding: got.ContentEncoding,
				DeliveryMode: got.DeliveryMode, Priority: got.Priority, CorrelationId: got.CorrelationId, ReplyTo: got.ReplyTo,
				Expiration: got.Expiration, MessageId: got.MessageId, Timestamp: got.Timestamp, Type: got.Type,
				UserId: got.UserId, AppId: got.AppId, Body: got.Body}
			if fmt.Sprintf("%#v", back) != fmt.Sprintf("%#v", want) {
				t.Errorf("message %d came back\n%#v\nwant\n%#v", i, back, want)
			}
		}
	}},
	{name: "prefetch holds deliveries until a multiple ack", declare: declNone, messages: 5, run: func(t *testing.T, e amqpEnv) {
		ch := amqpChannelAt(t, e.url)
		fatalOn(t, ch.Qos(2, 0, false))
		d := e.consume(t, ch)
		if all := delivered(t, d, 0, 2); all[0].DeliveryTag != 1 || all[1].DeliveryTag != 2 {
			t.Errorf("delivered tags %d %d, want 1 and 2", all[0].DeliveryTag, all[1].DeliveryTag)
		}
		// Both are unacknowledged: the broker sends no third one, and counts three ready.
		if n := e.ready(t); n != 3 {
			t.Errorf("%d ready with 2 unacknowledged, want 3", n)
		}
		if err := ch.Ack(2, true); err != nil { // acknowledges tags 1 and 2
			t.Fatal(err)
		}
		if all := delivered(t, d, 2, 4); all[0].DeliveryTag != 3 || all[1].DeliveryTag != 4 {
			t.Errorf("delivered tags %d %d, want 3 and 4", all[0].DeliveryTag, all[1].DeliveryTag)
		}
		if n := e.ready(t); n != 1 {
			t.Errorf("%d ready, want 1", n)
		}
		if err := ch.Ack(4, true); err != nil {
			t.Fatal(err)
		}
		if m := receive(t, d, "a delivery"); string(m.Body) != "message 4" || m.DeliveryTag != 5 {
			t.Errorf("delivered %q tag %d, want message 4 tag 5", m.Body, m.DeliveryTag)
		}
		if err := ch.Ack(5, false); err != nil {
			t.Fatal(err)
		}
		if err := ch.Close(); err != nil {
			t.Fatal(err)
		}
		if n := e.ready(t); n != 0 {
			t.Errorf("%d ready once all were acknowledged, want 0", n)
		}
	}},
	{name: "ack of an unknown delivery tag closes the channel 406", declare: declNone, messages: 1, run: func(t *testing.T, e amqpEnv) {
		ch := amqpChannelAt(t, e.url)
		closed := ch.NotifyClose(make(chan *amqp.Error, 1))
		receive(t, e.consume(t, ch), "a delivery")
		if err := ch.Ack(9, false); err != nil {
			t.Fatal(err)
		}
		wantClose(t, receive(t, closed, "the channel's close"), amqp.PreconditionFailed, "PRECONDITION_FAILED - unknown delivery tag 9")
		if n := e.ready(t); n != 1 {
			t.Errorf("%d ready after the close, want the delivery back: 1", n)
		}
	}},
	{name: "channel close requeues unacknowledged deliveries in order", declare: declNone, messages: 3, run: func(t *testing.T, e amqpEnv) {
		ch := orFatal(e.conn.Channel())(t)
		delivered(t, e.consume(t, ch), 0, 3)
		if err := ch.Close(); err != nil {
			t.Fatal(err)
		}
		if n := e.ready(t); n != 3 {
			t.Errorf("%d ready after the close, want 3", n)
		}
		for _, d := range delivered(t, e.consume(t, orFatal(e.conn.Channel())(t)), 0, 3) {
			if !d.Redelivered || d.DeliveryTag > 3 {
				t.Errorf("%q delivered again with tag %d, redelivered %v, want tags 1 to 3 of the new channel, redelivered", d.Body, d.DeliveryTag, d.Redelivered)
			}
		}
	}},
	{name: "connection close requeues unacknowledged deliveries", declare: declNone, messages: 2, run: func(t *testing.T, e amqpEnv) {
		delivered(t, e.consume(t, orFatal(e.conn.Channel())(t)), 0, 2)
		if err := e.conn.Close(); err != nil {
			t.Fatal(err)
		}
		if n := e.ready(t); n != 2 {
			t.Errorf("%d ready after the close, want 2", n)
		}
	}},
	{name: "purge removes the ready messages and answers their count", declare: declNone, messages: 4, run: func(t *testing.T, e amqpEnv) {
		con := amqpChannelAt(t, e.url)
		fatalOn(t, con.Qos(1, 0, false))
		receive(t, e.consume(t, con), "a delivery")
		n, err := amqpChannelAt(t, e.url).QueuePurge(e.queue, false)
		if err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Errorf("purged %d, want the 3 ready (not the unacknowledged one)", n)
		}
		if err := con.Close(); err != nil {
			t.Fatal(err)
		}
		if n := e.ready(t); n != 1 {
			t.Errorf("%d ready after the consumer's close, want the unacknowledged one back: 1", n)
		}
	}},
	{name: "consume and purge refused without read permission, passive declare allowed", declare: declNone, messages: 1, run: func(t *testing.T, e amqpEnv) {
		e.b.refuseRead(t, e.vhost, e.queue)
		// New connections: a broker may cache a connection's permissions until it reconnects.
		if _, err := amqpChannelAt(t, e.url).QueueDeclarePassive(e.queue, true, false, false, false, nil); err != nil {
			t.Errorf("passive declare: %v", err)
		}
		access := "read access" // 4.0 and 4.3; 3.10 leaves out which access
		if e.b.v == brokertest.V310 {
			access = "access"
		}
		reason := fmt.Sprintf("ACCESS_REFUSED - %s to queue '%s' in vhost '%s' refused for user '%s'", access, e.queue, e.vhost, e.b.user)
		_, err := amqpChannelAt(t, e.url).Consume(e.queue, "", false, false, false, false, nil)
		wantClose(t, err, amqp.AccessRefused, reason)
		_, err = amqpChannelAt(t, e.url).QueuePurge(e.queue, false)
		wantClose(t, err, amqp.AccessRefused, reason)
	}},
	{name: "consumer cancelled when its queue is deleted", declare: declNone, messages: 1, run: func(t *testing.T, e amqpEnv) {
		ch := orFatal(e.conn.Channel())(t)
		cancels := ch.NotifyCancel(make(chan string, 1))
		d := e.consume(t, ch)
		receive(t, d, "a delivery")
		if status, body := contractSend(t, e.b, "DELETE", "queues/"+url.PathEscape(e.vhost)+"/"+url.PathEscape(e.queue), ""); status != 204 {
			t.Fatalf("deleting the queue: HTTP %d %s", status, body)
		}
		// A frame from the client: the fake looks for gone queues after each.
		orFatal(e.conn.Channel())(t)
		if tag := receive(t, cancels, "basic.cancel"); tag != "contract-consumer" {
			t.Errorf("cancelled %q, want contract-consumer", tag)
		}
		select {
		case m, ok := <-d:
			if ok {
				t.Errorf("a delivery %q after the cancel, want the deliveries closed", m.Body)
			}
		case <-time.After(10 * time.Second):
			t.Error("the deliveries are still open 10s after the cancel")
		}
	}},
}
