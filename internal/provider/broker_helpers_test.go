package provider

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/mover"
	"github.com/queuey/terraform-provider-queuey/internal/redact"
)

// declareHoldFromState declares the hold queue a queuey_hold_queue data source
// describes, with exactly its arguments_json, and returns its name.
func declareHoldFromState(t *testing.T, s *terraform.State, addr string) string {
	t.Helper()
	rs, ok := s.RootModule().Resources[addr]
	if !ok {
		t.Fatalf("%s not in state", addr)
	}
	var args map[string]any
	fatalOn(t, json.Unmarshal([]byte(rs.Primary.Attributes["arguments_json"]), &args))
	declareIn(t, "/", rs.Primary.Attributes["name"], args)
	return rs.Primary.Attributes["name"]
}

// defaultUser and defaultPassword are RabbitMQ's default user, which every
// broker the scripts start (scripts/) has: the credentials of the tests
// unless RABBITMQ_USERNAME says otherwise.
const defaultUser, defaultPassword = "guest", "guest"

// testUser and testPassword are the management API credentials of the
// acceptance tests: RABBITMQ_USERNAME and RABBITMQ_PASSWORD, else the default.
func testUser() string { return cmp.Or(os.Getenv(EnvUsername), defaultUser) }

func testPassword() string {
	if os.Getenv(EnvUsername) != "" {
		return os.Getenv(EnvPassword)
	}
	return defaultPassword
}

// envClient is a management API client of the test broker of the environment (RABBITMQ_ENDPOINT,
// the credentials of testUser and testPassword), as the stand-in provider process builds it too.
func envClient() (*broker.Client, error) {
	return broker.New(broker.Config{Endpoint: os.Getenv(EnvEndpoint), Username: testUser(), Password: testPassword(),
		Insecure: os.Getenv(EnvInsecure) == "true"})
}

// accClients holds each test's accClient: one client, so one kept-alive connection, however
// often a test polls (a new client per call left a connection to the management API open per
// poll, and polling tests ran the broker out of file descriptors).
var accClients sync.Map // *testing.T → func() (*broker.Client, error), built once

// accClient is the test's management API client for checking what the broker holds; the first
// call builds it, and calls at once wait for that one.
func accClient(t *testing.T) *broker.Client {
	t.Helper()
	build, loaded := accClients.LoadOrStore(t, sync.OnceValues(envClient))
	if !loaded {
		t.Cleanup(func() { accClients.Delete(t) })
	}
	return orFatal(build.(func() (*broker.Client, error))())(t) //nolint:forcetypeassert // only accClient stores
}

// accMover is the message mover of the test broker's AMQP port (the broker scripts set it beside
// the endpoint), beside accClient.
func accMover(t *testing.T) *mover.Mover {
	t.Helper()
	return moverOf(t, accClient(t), os.Getenv(EnvAMQP))
}

// moverOf is the message mover beside c, built as the provider builds it, at amqpEndpoint ("":
// derived from c's endpoint).
func moverOf(t *testing.T, c *broker.Client, amqpEndpoint string) *mover.Mover {
	t.Helper()
	d := &providerData{endpointSet: true, client: c, amqpEndpoint: amqpEndpoint}
	d.clientOnce.Do(func() {})
	m, diags := d.messageMover()
	if diags.HasError() {
		t.Fatal(diags)
	}
	return m
}

// accAdmin is an administration client of the acceptance tests' broker, for
// the vhosts, users and permissions a test sets up.
func accAdmin(t *testing.T) *brokertest.Admin {
	t.Helper()
	return orFatal(brokertest.NewAdmin(os.Getenv(EnvEndpoint), testUser(), testPassword(), os.Getenv(EnvInsecure) == "true"))(t)
}

// allPermissions grants everything in a vhost.
var allPermissions = brokertest.Permissions{Configure: ".*", Write: ".*", Read: ".*"}

// createUser makes a user with a password and tags, with the permissions p in
// vhost, and deletes it at cleanup.
func createUser(t *testing.T, name, password, tags, vhost string, p brokertest.Permissions) {
	t.Helper()
	a := accAdmin(t)
	t.Cleanup(func() { _ = a.DeleteUser(context.Background(), name) })
	fatalOn(t, errors.Join(a.PutUser(t.Context(), name, password, tags), a.SetPermissions(t.Context(), vhost, name, p)))
}

// amqpURL is the AMQP URL of vhost on the test broker. RABBITMQ_AMQP_URL may
// give the server (default amqp://<user>:<password>@127.0.0.1:5672).
func amqpURL(vhost string) string {
	base := cmp.Or(os.Getenv("RABBITMQ_AMQP_URL"),
		(&url.URL{Scheme: "amqp", User: url.UserPassword(testUser(), testPassword()), Host: "127.0.0.1:5672"}).String())
	return strings.TrimRight(base, "/") + "/" + url.PathEscape(vhost)
}

// amqpChannel opens a connection and channel to vhost, closed at cleanup.
func amqpChannel(t *testing.T, vhost string) *amqp.Channel {
	t.Helper()
	return amqpChannelAt(t, amqpURL(vhost))
}

// amqpChannelAt opens a connection and channel to an AMQP URL (with its
// vhost), closed at cleanup.
func amqpChannelAt(t *testing.T, u string) *amqp.Channel {
	t.Helper()
	conn, err := amqp.DialConfig(u, amqp.Config{Dial: amqp.DefaultDial(10 * time.Second)})
	if err != nil {
		t.Fatalf("AMQP connection to %s: %v", redact.URL(u), err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return orFatal(conn.Channel())(t)
}

// publish sends n persistent messages to queue through ch and the default
// exchange, and waits for the broker's confirms.
func publish(t *testing.T, ch *amqp.Channel, queue string, n int) {
	t.Helper()
	publishConfirmed(t, ch, queue, n, func(i int) amqp.Publishing {
		return amqp.Publishing{DeliveryMode: amqp.Persistent, Body: []byte(fmt.Sprintf("message %d", i))}
	})
}

// publishConfirmed sends msg(0) to msg(n-1) to queue through ch and the
// default exchange, all before waiting for the broker's confirms (so many
// messages are sent at once), within two minutes in all.
func publishConfirmed(t *testing.T, ch *amqp.Channel, queue string, n int, msg func(i int) amqp.Publishing) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fatalOn(t, ch.Confirm(false))
	pending := make([]*amqp.DeferredConfirmation, n)
	for i := range pending {
		pending[i] = orFatal(ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, msg(i)))(t)
	}
	for _, dc := range pending {
		if ok, err := dc.WaitContext(ctx); !ok || err != nil {
			t.Fatalf("publish not confirmed: %v", err)
		}
	}
}

// messagesIn returns the exact number of ready messages in queue of vhost,
// asked over AMQP (a passive declare), so it does not lag like the
// management API.
func messagesIn(t *testing.T, vhost, queue string) int {
	t.Helper()
	return orFatal(amqpChannel(t, vhost).QueueDeclarePassive(queue, true, false, false, false, nil))(t).Messages
}

// queueExists reports whether queue exists, asked of the management API: unlike a passive
// declare over AMQP, the question does not count as use of the queue.
func queueExists(t *testing.T, vhost, queue string) bool {
	t.Helper()
	_, err := accClient(t).GetQueue(context.Background(), vhost, queue, broker.Declared)
	if err != nil && !errors.Is(err, broker.ErrNotFound) {
		t.Fatalf("checking queue %q: %v", queue, err)
	}
	return err == nil
}

// deleteOutOfBand deletes queues of the vhost "/" behind Terraform's back,
// whatever they hold (a test step's PreConfig).
func deleteOutOfBand(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		_ = accClient(t).DeleteQueue(context.Background(), "/", n, false)
	}
}

// cleanupQueues deletes, at the end of the test, every queue of vhost whose
// name starts with prefix, whatever it holds: a test's queue q with q.dead
// and its hold queues, or a batch of queues named from one unique base. It
// does nothing when the test was skipped before it touched a broker.
func cleanupQueues(t *testing.T, vhost, prefix string) {
	t.Helper()
	t.Cleanup(func() {
		if os.Getenv("TF_ACC") == "" || os.Getenv(EnvEndpoint) == "" {
			return
		}
		deleteQueuesWithPrefix(accClient(t), vhost, prefix)
	})
}

// deleteQueuesWithPrefix deletes through c every queue of vhost whose name
// starts with prefix, whatever it holds.
func deleteQueuesWithPrefix(c *broker.Client, vhost, prefix string) {
	names, _ := queuesWithPrefix(c, vhost, prefix)
	for _, name := range names {
		_ = c.DeleteQueue(context.Background(), vhost, name, false)
	}
}

// queuesWithPrefix lists through c the names of the queues of vhost that
// start with prefix.
func queuesWithPrefix(c *broker.Client, vhost, prefix string) ([]string, error) {
	all, err := listQueues(c, vhost, broker.Counted)
	names := slices.Collect(maps.Keys(all))
	return slices.DeleteFunc(names, func(name string) bool { return !strings.HasPrefix(name, prefix) }), err
}

// getQueue reads a queue of vhost "/" through the management API, failing
// the test when it is missing.
func getQueue(t *testing.T, name string) broker.Queue {
	t.Helper()
	return orFatal(accClient(t).GetQueue(context.Background(), "/", name, broker.Declared))(t)
}

// createVhost makes a vhost for the test, with guest-style permissions for
// the test user, and deletes it at cleanup.
func createVhost(t *testing.T, name, defaultQueueType string) {
	t.Helper()
	a := accAdmin(t)
	t.Cleanup(func() { _ = a.DeleteVhost(context.Background(), name) })
	fatalOn(t, errors.Join(a.PutVhost(t.Context(), name, defaultQueueType), a.SetPermissions(t.Context(), name, testUser(), allPermissions)))
}

// declaredAs checks a queue the broker reports against what the backend
// declares, spelled out here rather than computed by the code under test:
// classic, durable, not auto-delete, not exclusive, and exactly wantArgs (a
// JSON object with sorted keys) as arguments, an x-queue-type: classic that
// RabbitMQ 3.13+ adds by itself aside.
func declaredAs(q broker.Queue, wantArgs string) error {
	args := map[string]any{} // not a clone: no arguments must marshal as {}, not null
	maps.Copy(args, q.Arguments)
	maps.DeleteFunc(args, func(k string, v any) bool { return k == "x-queue-type" && v == "classic" })
	got, _ := json.Marshal(args) // a failure leaves got empty, which differs from wantArgs
	const want = "classic durable=true auto_delete=false exclusive=false arguments="
	if is := fmt.Sprintf("%s durable=%v auto_delete=%v exclusive=%v arguments=", cmp.Or(q.Type, "classic"), q.Durable, q.AutoDelete,
		q.Exclusive); is+string(got) != want+wantArgs {
		return fmt.Errorf("queue %q is %s%s, want %s%s", q.Name, is, got, want, wantArgs)
	}
	return nil
}

// listQueues lists vhost through c, from a request sent for this call, with
// what.
func listQueues(c *broker.Client, vhost string, what broker.Detail) (map[string]broker.Queue, error) {
	l, err := c.ListQueues(context.Background(), vhost, what, broker.Live)
	return l.Queues, err
}

// orFatal takes the results of a call, v and err, and returns what gives v to a test,
// failing it with err when err is not nil (fatalOn): orFatal(call())(t).
func orFatal[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		fatalOn(t, err)
		return v
	}
}

// fatalOn fails the test with err when err is not nil.
func fatalOn(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
