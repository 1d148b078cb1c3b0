package provider

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// redeclareN is the number of messages on q in the change tests: enough for
// several confirm windows of the move, few enough for CI.
const redeclareN = 2000

// redeclareCLI is a Terraform working directory with one queuey_queue
// named name; provider is the provider block's body.
type redeclareCLI struct {
	*terraformCLI
	name, provider string
}

func newRedeclareCLI(t *testing.T, name, provider string) *redeclareCLI {
	t.Helper()
	return &redeclareCLI{terraformCLI: newTerraformCLI(t, ""), name: name, provider: provider}
}

// configure writes the configuration: the queue with these settings.
func (c *redeclareCLI) configure(body string) {
	c.t.Helper()
	c.writeConfig(requiredQueuey + providerQueue(c.provider, c.name, body))
}

// jobMessage is the i-th message the change tests publish to q: priorities
// 0 to 5, headers and a message id.
func jobMessage(i int) amqp.Publishing {
	return amqp.Publishing{
		Headers:      amqp.Table{"x-queuey-job": fmt.Sprintf("job-%d", i), "x-queuey-attempt": int32(i % 7)},
		DeliveryMode: amqp.Persistent, Priority: uint8(i % 6), MessageId: fmt.Sprintf("m-%06d", i),
		ContentType: "application/json", Body: []byte(fmt.Sprintf(`{"n":%d}`, i)),
	}
}

// checkJobs checks that ds are the n jobMessages, each once, with their headers, body and
// properties, in order of id within each priority: a message seen twice or left out breaks it.
func checkJobs(t *testing.T, ds []amqp.Delivery, n int) {
	t.Helper()
	if len(ds) != n {
		t.Fatalf("%d messages, want %d", len(ds), n)
	}
	next := [6]int{0, 1, 2, 3, 4, 5} // the id due next of each priority: jobMessage(i)'s is i % 6
	for _, d := range ds {
		got := amqp.Publishing{Headers: d.Headers, DeliveryMode: d.DeliveryMode, Priority: d.Priority, MessageId: d.MessageId,
			ContentType: d.ContentType, Body: d.Body}
		if want := jobMessage(next[d.Priority%6]); !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", d, want)
		}
		next[d.Priority%6] += 6
	}
}

// changeTopology declares, through the CLI, a queue with message_ttl 1h and
// max_priority 5, then publishes redeclareN jobs to it and 5 dead letters to
// q.dead, and declares an empty hold queue of it.
func changeTopology(t *testing.T, c *redeclareCLI, n int) {
	t.Helper()
	c.configure("  message_ttl = \"1h\"\n  max_priority = 5\n")
	c.mustRun("apply", "-auto-approve")
	declareHoldIn(t, "/", c.name, 600000)
	publishConfirmed(t, amqpChannel(t, "/"), c.name, n, jobMessage)
	publishDead(t, amqpChannel(t, "/"), c.name, 5, nil)
}

// newArgs is the configuration of the change and the table it declares.
const (
	newSettings = "  message_ttl = \"2h\"\n  max_priority = 10\n"
	newTable    = `{"x-max-priority":10,"x-message-ttl":7200000}`
	oldTable    = `{"x-max-priority":5,"x-message-ttl":3600000}`
)

// A new message_ttl and max_priority: without keep_messages_on_change the plan
// warns and the apply refuses, nothing changed; with it, q is declared again
// with the new arguments and holds every message, in order within each
// priority, headers unchanged; q.dead keeps its 5, the hold queue stays, no
// holding queue is left, and the next plan is empty.
func TestAccQueueRedeclare_keepsMessages(t *testing.T) {
	testAccPreCheck(t)
	t.Parallel()
	name := uniqueName("redecl")
	cleanupQueues(t, "/", name)
	c := newRedeclareCLI(t, name, "")
	changeTopology(t, c, redeclareN)

	c.configure(newSettings)
	out := c.mustRun("plan")
	if !saysWords(out, "~ update in-place") || !saysWords(out, "Queue Will Be Declared Again") ||
		!saysWords(out, "It holds 2000 messages") || !saysWords(out, "The apply will refuse and change nothing while it holds messages") {
		t.Errorf("the plan of the change lacks the update or the warning:\n%s", out)
	}
	out, err := c.run("apply", "-auto-approve")
	if err == nil || !saysWords(out, "Queue Holds Messages: Change Refused") || !saysWords(out, "it holds 2000 messages") {
		t.Fatalf("the change without keep_messages_on_change was not refused: %v\n%s", err, out)
	}
	if err := declaredAs(getQueue(t, name), oldTable); err != nil || messagesIn(t, "/", name) != redeclareN {
		t.Fatalf("a refused change changed %s: %v, %d messages", name, err, messagesIn(t, "/", name))
	}

	c.configure(newSettings + "  keep_messages_on_change = true\n")
	out = c.mustRun("plan")
	if !saysWords(out, "keep_messages_on_change = true: the apply moves its messages to "+name+".redeclaring and back") {
		t.Errorf("the plan lacks what the apply will do:\n%s", out)
	}
	t.Logf("terraform apply prints:\n%s", c.mustRun("apply", "-auto-approve"))
	if err := declaredAs(getQueue(t, name), newTable); err != nil {
		t.Error(err)
	}
	checkJobs(t, readBack(t, amqpChannel(t, "/"), name), redeclareN)
	if n := messagesIn(t, "/", name+".dead"); n != 5 {
		t.Errorf("%s.dead holds %d messages, want its 5", name, n)
	}
	if !queueExists(t, "/", name+".deferred.600000") || queueExists(t, "/", name+".redeclaring") {
		t.Errorf("after the change: hold queue there %v, holding queue there %v; want true, false",
			queueExists(t, "/", name+".deferred.600000"), queueExists(t, "/", name+".redeclaring"))
	}
	if out := c.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes") {
		t.Errorf("the plan after the change:\n%s", out)
	}
}

// An empty q is declared again without a holding queue.
func TestAccQueueRedeclare_emptyQueue(t *testing.T) {
	testAccPreCheck(t)
	t.Parallel()
	name := uniqueName("redecl-empty")
	cleanupQueues(t, "/", name)
	c := newRedeclareCLI(t, name, "")
	changeTopology(t, c, 0)
	c.configure(newSettings)
	out := c.mustRun("apply", "-auto-approve")
	if !saysWords(out, "It is empty: the apply deletes it") {
		t.Errorf("the apply's plan lacks the warning:\n%s", out)
	}
	if err := declaredAs(getQueue(t, name), newTable); err != nil {
		t.Error(err)
	}
	if queueExists(t, "/", name+".redeclaring") || messagesIn(t, "/", name+".dead") != 5 {
		t.Errorf("an empty queue's change left a holding queue or touched %s.dead", name)
	}
}

// A consumer on q, or a message in a hold queue of q, refuses the change,
// keep_messages_on_change or not, and nothing changes.
func TestAccQueueRedeclare_refusals(t *testing.T) {
	testAccPreCheck(t)
	t.Parallel()
	name := uniqueName("redecl-refuse")
	cleanupQueues(t, "/", name)
	c := newRedeclareCLI(t, name, "")
	changeTopology(t, c, 10)
	c.configure(newSettings + "  keep_messages_on_change = true\n")

	ch := amqpChannel(t, "/")
	if _, err := ch.Consume(name, "app", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	waitConsumers(t, "/", name, 1)
	out, err := c.run("apply", "-auto-approve")
	if err == nil || !saysWords(out, "Queue In Use: Change Refused") || !saysWords(out, "it has 1 consumer") {
		t.Errorf("a change with a consumer on q: %v\n%s", err, out)
	}
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}

	hold := name + ".deferred.600000"
	publish(t, amqpChannel(t, "/"), hold, 1)
	out, err = c.run("apply", "-auto-approve")
	if err == nil || !saysWords(out, "Hold Queues Hold Messages: Change Refused") || !saysWords(out, hold+": 1 message") ||
		!saysWords(out, "at most 10m (its TTL)") {
		t.Errorf("a change with a message in a hold queue: %v\n%s", err, out)
	}
	if err := declaredAs(getQueue(t, name), oldTable); err != nil || messagesIn(t, "/", name) != 10 || messagesIn(t, "/", hold) != 1 {
		t.Errorf("a refused change changed something: %v, %d on q, %d on the hold queue", err, messagesIn(t, "/", name), messagesIn(t, "/", hold))
	}
}

// An interruption between the two moves (the AMQP connection of the move
// back reset) fails the apply saying where the messages wait; the next
// plan shows an update with a warning; the next apply, once AMQP answers
// again, finishes; nothing is lost.
func TestAccQueueRedeclare_interrupted(t *testing.T) {
	testAccPreCheck(t)
	t.Parallel()
	name := uniqueName("redecl-intr")
	cleanupQueues(t, "/", name)
	broker := orFatal(url.Parse(amqpURL("/")))(t)
	proxy := orFatal(brokertest.NewFaultProxy(broker.Host))(t)
	t.Cleanup(proxy.Close)
	c := newRedeclareCLI(t, name, fmt.Sprintf("  amqp_endpoint = \"amqp://%s\"\n  retry_budget = \"1s\"\n", proxy.Addr))
	changeTopology(t, c, redeclareN)
	c.configure(newSettings + "  keep_messages_on_change = true\n")

	// The move aside's connection passes; the move back's, and every one
	// after it, is reset at its first byte.
	proxy.Arm(brokertest.Fault{Kind: brokertest.FaultReset, Skip: 1, All: true})
	out, err := c.run("apply", "-auto-approve")
	holding := name + ".redeclaring"
	if err == nil || !saysWords(out, "Change Interrupted: Messages Wait In "+holding) ||
		!saysWords(out, "Nothing is lost: the messages not moved back wait in "+holding) {
		t.Fatalf("the interrupted apply: %v\n%s", err, out)
	}
	if n := messagesIn(t, "/", holding); n != redeclareN {
		t.Fatalf("%s holds %d messages after the interruption, want %d; the apply said:\n%s", holding, n, redeclareN, out)
	}
	t.Logf("the interrupted apply prints:\n%s", out)
	out = c.mustRun("plan")
	t.Logf("the next plan prints:\n%s", out)
	if !saysWords(out, "~ update in-place") || !saysWords(out, holding+" holds 2000 messages of an interrupted change: the apply moves them back to "+name) {
		t.Errorf("the plan after the interruption:\n%s", out)
	}
	proxy.Heal()
	c.mustRun("apply", "-auto-approve")
	if err := declaredAs(getQueue(t, name), newTable); err != nil {
		t.Error(err)
	}
	checkJobs(t, readBack(t, amqpChannel(t, "/"), name), redeclareN)
	if queueExists(t, "/", holding) || messagesIn(t, "/", name+".dead") != 5 {
		t.Errorf("after the next apply: holding queue left, or %s.dead changed", name)
	}
	if out := c.mustRun("plan"); !strings.Contains(out, "No changes") {
		t.Errorf("the plan after the next apply:\n%s", out)
	}
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !eventually(time.Minute, cond) {
		t.Fatalf("waited a minute for %s", what)
	}
}
