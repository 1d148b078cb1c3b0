package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/mover"
)

// The redrive case: n dead letters of 1 KiB moved from q.dead to q by mover.Mover.Move
// (what queuey_redrive_dead_letters runs), beside a bare amqp091-go loop with the same guarantee
// (consume with prefetch, publish mandatory under confirms, ack each after its confirm). Runs
// alternate; the table shows the median rates and their ratio.

const redriveBody = 1024

func runRedrive(ctx context.Context, o options) error {
	c, err := broker.New(broker.Config{Endpoint: o.endpoint, Username: o.username, Password: o.password})
	if err != nil {
		return err
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	q := "bench-redrive-" + hex.EncodeToString(b)
	for _, name := range []string{q + ".dead", q} {
		if err := c.DeclareQueue(ctx, "/", name, map[string]any{}); err != nil {
			return err
		}
	}
	defer func() {
		for _, name := range []string{q, q + ".dead"} {
			_ = c.DeleteQueue(context.Background(), "/", name, false)
		}
	}()
	mv := moverOf(c)
	amqpURL := amqpURLOf(mv.URL(), o, "/")
	var action, floor []float64
	for run := 1; run <= o.runs; run++ {
		for _, kind := range []string{"action", "floor"} {
			if err := refill(ctx, amqpURL, q, o.redrive); err != nil {
				return err
			}
			start := time.Now()
			var moved int
			if kind == "action" {
				moved, err = mv.Move(ctx, mover.Move{Vhost: "/", From: q + ".dead", To: q})
			} else {
				moved, err = bareRedrive(ctx, amqpURL, q+".dead", q)
			}
			took := time.Since(start)
			if err != nil {
				return fmt.Errorf("%s run %d: %w", kind, run, err)
			}
			if moved != o.redrive {
				return fmt.Errorf("%s run %d moved %d of %d", kind, run, moved, o.redrive)
			}
			rate := logRun(run, kind, moved, took)
			if kind == "action" {
				action = append(action, rate)
			} else {
				floor = append(floor, rate)
			}
		}
	}
	a, f := median(action), median(floor)
	fmt.Printf("\nredrive of %d dead letters of %d B (median of %d runs, window %d):\n", o.redrive, redriveBody, o.runs, mover.Window)
	fmt.Printf("| mover | messages/s |\n|---|---|\n| queuey_redrive_dead_letters (mover.Mover.Move) | %.0f |\n", a)
	fmt.Printf("| bare amqp091-go loop, same guarantee (floor) | %.0f |\n| ratio | %.2fx |\n", f, a/f)
	return nil
}

// logRun prints one run's line to stderr and returns its messages/s.
func logRun(run int, kind string, moved int, took time.Duration) float64 {
	rate := float64(moved) / took.Seconds()
	fmt.Fprintf(os.Stderr, "  run %d %-8s %d messages in %s: %.0f messages/s\n", run, kind, moved, took.Round(time.Millisecond), rate)
	return rate
}

// moverOf is the message mover beside c as the provider builds it without amqp_endpoint: its AMQP
// URL derived from c's endpoint.
func moverOf(c *broker.Client) *mover.Mover {
	u, derived, _ := mover.EndpointFor("", c.Endpoint())
	return mover.New(mover.Config{URL: u, Derived: derived, TLS: c.TLSConfig(), Credentials: c.AMQPCredentials,
		TokenAuth: c.UsesToken(), Whoami: c.Whoami, Wrote: c.MarkWritten})
}

// amqpURLOf is the AMQP URL of vhost at base, with o's credentials.
func amqpURLOf(base string, o options, vhost string) string {
	u, _ := url.Parse(base)
	u.User = url.UserPassword(o.username, o.password)
	return strings.TrimRight(u.String(), "/") + "/" + url.PathEscape(vhost)
}

// refill empties q and q.dead and publishes n dead letters to q.dead.
func refill(ctx context.Context, u, q string, n int) error {
	conn, ch, err := dialChannel(u)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	for _, name := range []string{q, q + ".dead"} {
		if _, err := ch.QueuePurge(name, false); err != nil {
			return err
		}
	}
	return publish(ctx, ch, q+".dead", n, func(i int) amqp.Publishing {
		return amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i),
			Headers: amqp.Table{"x-death": []any{amqp.Table{"count": int64(1), "queue": q, "reason": "rejected"}}}}
	})
}

// dialChannel opens a connection to u and a channel on it; closing the connection closes both.
func dialChannel(u string) (*amqp.Connection, *amqp.Channel, error) {
	conn, err := amqp.Dial(u)
	if err != nil {
		return nil, nil, err
	}
	ch, err := conn.Channel()
	if err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	return conn, ch, nil
}

// publish puts n persistent messages on queue under confirms, msg(i) giving each one's properties.
func publish(ctx context.Context, ch *amqp.Channel, queue string, n int, msg func(i int) amqp.Publishing) error {
	if err := ch.Confirm(false); err != nil {
		return err
	}
	body := make([]byte, redriveBody)
	var last *amqp.DeferredConfirmation
	for i := range n {
		m := msg(i)
		m.DeliveryMode, m.ContentType, m.Body = amqp.Persistent, "application/octet-stream", body
		var err error
		if last, err = ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, m); err != nil {
			return err
		}
	}
	if ok, err := last.WaitContext(ctx); !ok || err != nil {
		return fmt.Errorf("publish to %s not confirmed: %v", queue, err)
	}
	return nil
}

// bareRedrive is the floor: the same move with the same guarantee, plainly with amqp091-go.
func bareRedrive(ctx context.Context, u, from, to string) (int, error) {
	conn, err := amqp.Dial(u)
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close() }()
	l, n, err := openBareLoop(conn, from)
	if err != nil {
		return 0, err
	}
	return l.move(ctx, n, to)
}

// bareLoop is the floor's state on one connection: a consuming channel, a publishing channel under
// confirms, and the window of messages published but not yet confirmed and acked.
type bareLoop struct {
	con, pub   *amqp.Channel
	returns    chan amqp.Return
	deliveries <-chan amqp.Delivery
	window     []bareInflight
	moved      int
}

// bareInflight is a delivery from the source and the confirm of its copy's publish.
type bareInflight struct {
	d  amqp.Delivery
	dc *amqp.DeferredConfirmation
}

// openBareLoop opens the loop's two channels on conn, counts from's messages (the loop moves that
// many), and starts consuming from with a prefetch of twice the mover's window.
func openBareLoop(conn *amqp.Connection, from string) (*bareLoop, int, error) {
	con, err := conn.Channel()
	if err != nil {
		return nil, 0, err
	}
	pub, err := conn.Channel()
	if err != nil {
		return nil, 0, err
	}
	q, err := con.QueueDeclarePassive(from, true, false, false, false, nil)
	if err != nil {
		return nil, 0, err
	}
	if err := pub.Confirm(false); err != nil {
		return nil, 0, err
	}
	l := &bareLoop{con: con, pub: pub, returns: pub.NotifyReturn(make(chan amqp.Return, mover.Window+1))}
	if err := con.Qos(2*mover.Window, 0, false); err != nil {
		return nil, 0, err
	}
	if l.deliveries, err = con.Consume(from, "", false, false, false, false, nil); err != nil {
		return nil, 0, err
	}
	return l, q.Messages, nil
}

// move publishes n deliveries to queue to, mandatory, settling the oldest whenever the window is
// full and the rest at the end; it returns how many were moved.
func (l *bareLoop) move(ctx context.Context, n int, to string) (int, error) {
	for published := 0; published < n; published++ {
		d := <-l.deliveries
		dc, err := l.pub.PublishWithDeferredConfirmWithContext(ctx, "", to, true, false, amqp.Publishing{
			Headers: d.Headers, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding, DeliveryMode: d.DeliveryMode,
			Priority: d.Priority, CorrelationId: d.CorrelationId, ReplyTo: d.ReplyTo, Expiration: d.Expiration,
			MessageId: d.MessageId, Timestamp: d.Timestamp, Type: d.Type, UserId: d.UserId, AppId: d.AppId, Body: d.Body,
		})
		if err != nil {
			return l.moved, err
		}
		l.window = append(l.window, bareInflight{d, dc})
		if len(l.window) == mover.Window {
			if err := l.settle(ctx); err != nil {
				return l.moved, err
			}
		}
	}
	for len(l.window) > 0 {
		if err := l.settle(ctx); err != nil {
			return l.moved, err
		}
	}
	return l.moved, l.con.Close()
}

// settle waits for the oldest publish's confirm and acks its delivery when the broker neither
// refused nor returned it: the guarantee the mover gives.
func (l *bareLoop) settle(ctx context.Context) error {
	h := l.window[0]
	l.window = l.window[1:]
	if ok, err := h.dc.WaitContext(ctx); !ok || err != nil {
		return fmt.Errorf("not confirmed: %v", err)
	}
	select {
	case <-l.returns:
		return errors.New("returned")
	default:
	}
	l.moved++
	return h.d.Ack(false)
}
