package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
)

// accClient is a management API client for checking what the broker holds.
func accClient(t *testing.T) *broker.Client {
	t.Helper()
	c, err := broker.New(broker.Config{
		Endpoint: os.Getenv(EnvEndpoint),
		Username: os.Getenv(EnvUsername),
		Password: os.Getenv(EnvPassword),
		Insecure: os.Getenv(EnvInsecure) == "true",
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// uniqueName returns a queue name no other test run uses.
func uniqueName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "tfacc-" + prefix + "-" + hex.EncodeToString(b)
}

// amqpURL is the AMQP URL of vhost on the test broker. RABBITMQ_AMQP_URL may
// give the server (default amqp://<user>:<password>@127.0.0.1:5672).
func amqpURL(vhost string) string {
	base := os.Getenv("RABBITMQ_AMQP_URL")
	if base == "" {
		u, p := os.Getenv(EnvUsername), os.Getenv(EnvPassword)
		if u == "" {
			u, p = "guest", "guest"
		}
		base = (&url.URL{Scheme: "amqp", User: url.UserPassword(u, p), Host: "127.0.0.1:5672"}).String()
	}
	return strings.TrimRight(base, "/") + "/" + url.PathEscape(vhost)
}

// amqpChannel opens a connection and channel to vhost, closed at cleanup.
func amqpChannel(t *testing.T, vhost string) *amqp.Channel {
	t.Helper()
	conn, err := amqp.DialConfig(amqpURL(vhost), amqp.Config{Dial: amqp.DefaultDial(10 * time.Second)})
	if err != nil {
		t.Fatalf("AMQP connection to vhost %q: %v", vhost, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// publish sends n persistent messages to queue in vhost "/" through the default exchange
// and waits for the broker's confirms.
func publish(t *testing.T, queue string, n int) {
	const vhost = "/"
	t.Helper()
	ch := amqpChannel(t, vhost)
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range n {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, amqp.Publishing{
			DeliveryMode: amqp.Persistent, Body: []byte(fmt.Sprintf("message %d", i)),
		})
		if err != nil {
			t.Fatalf("publishing to %q: %v", queue, err)
		}
		ok, err := dc.WaitContext(ctx)
		if err != nil || !ok {
			t.Fatalf("publish to %q not confirmed: %v", queue, err)
		}
	}
}

// messageCount returns the exact number of ready messages in queue, asked over
// AMQP (a passive declare), so it does not lag like the management API.
func messageCount(t *testing.T, queue string) int {
	const vhost = "/"
	t.Helper()
	ch := amqpChannel(t, vhost)
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("queue %q in vhost %q: %v", queue, vhost, err)
	}
	return q.Messages
}

// queueExists reports whether queue exists, asked over AMQP.
func queueExists(t *testing.T, vhost, queue string) bool {
	t.Helper()
	ch := amqpChannel(t, vhost)
	_, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotFound {
		return false
	}
	if err != nil {
		t.Fatalf("checking queue %q: %v", queue, err)
	}
	return true
}

// forceDelete removes queues left by a failed test.
func forceDelete(t *testing.T, names ...string) {
	const vhost = "/"
	t.Helper()
	c := accClient(t)
	for _, n := range names {
		_ = c.DeleteQueue(context.Background(), vhost, n, false)
	}
}

// cleanupTopology deletes, at the end of the test, q, its dead-letter queue
// and every hold queue of q that a failed test may have left.
func cleanupTopology(t *testing.T, vhost, q string) {
	t.Helper()
	t.Cleanup(func() {
		if os.Getenv("TF_ACC") == "" || os.Getenv(EnvEndpoint) == "" {
			return // the test was skipped before it touched a broker
		}
		c := accClient(t)
		all, err := c.ListQueues(context.Background(), vhost)
		if err != nil {
			return
		}
		for name := range all {
			if name == q || strings.HasPrefix(name, q+".") {
				_ = c.DeleteQueue(context.Background(), vhost, name, false)
			}
		}
	})
}

// getQueue reads a queue through the management API, failing the test when
// it is missing.
func getQueue(t *testing.T, vhost, name string) broker.Queue {
	t.Helper()
	q, err := accClient(t).GetQueue(context.Background(), vhost, name)
	if err != nil {
		t.Fatalf("queue %q in vhost %q: %v", name, vhost, err)
	}
	return q
}

// createVhost makes a vhost for the test, with guest-style permissions for
// the test user, and deletes it at cleanup.
func createVhost(t *testing.T, name, defaultQueueType string) {
	t.Helper()
	c := accClient(t)
	if err := c.PutVhost(context.Background(), name, defaultQueueType); err != nil {
		t.Fatal(err)
	}
	user := os.Getenv(EnvUsername)
	if user == "" {
		user = "guest"
	}
	if err := c.SetPermissions(context.Background(), name, user, broker.Permissions{Configure: ".*", Write: ".*", Read: ".*"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteVhost(context.Background(), name) })
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// managementHas reports whether the management API lists queue; unlike a
// passive declare it does not count as use of the queue.
func managementHas(t *testing.T, vhost, queue string) bool {
	t.Helper()
	all, err := accClient(t).ListQueues(context.Background(), vhost)
	if err != nil {
		t.Fatal(err)
	}
	_, ok := all[queue]
	return ok
}
