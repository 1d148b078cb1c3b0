package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/queuey/terraform-provider-queuey/internal/broker"
	amqp "github.com/rabbitmq/amqp091-go"
)

// These tests prove the no-data-loss rules with real messages over AMQP.

func TestAccQueue_destroyRefusesWhileMessagesWait(t *testing.T) {
	testAccPreCheck(t)
	name := uniqueName("keep")
	cleanupQueues(t, "/", name)
	cfg := queueConfig(name, `  max_priority = 10`)
	resource.ParallelTest(t, queueCase(t, name, []resource.TestStep{
		{Config: cfg},
		{
			PreConfig: func() { publish(t, amqpChannel(t, "/"), name, 3) },
			Config:    cfg,
			Destroy:   true,
			ExpectError: regexp.MustCompile(`(?s)Queue\s+Not\s+Empty.*Nothing\s+of\s+queue\s+"` + regexp.QuoteMeta(name) + `"\s+was\s+deleted.*` + regexp.QuoteMeta(name) +
				`:\s+3\s+messages,\s+0\s+consumers.*force_destroy`),
		},
		{
			// The refused destroy lost nothing.
			PreConfig: func() {
				if n := messagesIn(t, "/", name); n != 3 {
					t.Fatalf("after a refused destroy %s holds %d messages, want 3", name, n)
				}
				if !queueExists(t, "/", name+".dead") {
					t.Fatalf("a refused destroy deleted %s.dead", name)
				}
			},
			Config:   cfg,
			PlanOnly: true,
		},
		{
			// A message in q.dead blocks destroy too.
			PreConfig: func() {
				if n := orFatal(amqpChannel(t, "/").QueuePurge(name, false))(t); n != 3 {
					t.Fatalf("purged %d messages from %s, want the 3 the step before counted", n, name)
				}
				publish(t, amqpChannel(t, "/"), name+".dead", 1)
			},
			Config:      cfg,
			Destroy:     true,
			ExpectError: regexp.MustCompile(regexp.QuoteMeta(name) + `\.dead:\s+1\s+message,`),
		},
		{
			PreConfig: func() {
				if n := messagesIn(t, "/", name+".dead"); n != 1 {
					t.Fatalf("%s.dead holds %d messages, want 1", name, n)
				}
			},
			// force_destroy changes in place, then the final destroy deletes everything.
			Config: queueConfig(name, `  max_priority  = 10
  force_destroy = true`),
		},
	}))
}

func TestAccQueue_unackedAndConsumersBlockDestroy(t *testing.T) {
	testAccPreCheck(t)
	name := uniqueName("unacked")
	cleanupQueues(t, "/", name)
	cfg := queueConfig(name, "")
	var ch *amqp.Channel
	resource.ParallelTest(t, queueCase(t, name, []resource.TestStep{
		{Config: cfg},
		{
			// One message delivered to a consumer and not acknowledged:
			// if-empty alone would let the queue go.
			PreConfig: func() {
				publish(t, amqpChannel(t, "/"), name, 1)
				ch = amqpChannel(t, "/")
				deliveries, err := ch.Consume(name, "", false, false, false, false, nil)
				if err != nil {
					t.Fatal(err)
				}
				select {
				case <-deliveries:
				case <-time.After(10 * time.Second):
					t.Fatal("no delivery")
				}
				waitConsumers(t, "/", name, 1)
			},
			Config:      cfg,
			Destroy:     true,
			ExpectError: regexp.MustCompile(regexp.QuoteMeta(name) + `:\s+1\s+message,\s+1\s+consumer\b`),
		},
		{
			PreConfig: func() {
				// Nack back to the queue and let the consumer go.
				_ = ch.Close()
				if n := messagesIn(t, "/", name); n != 1 {
					t.Fatalf("%s holds %d messages after the consumer left, want 1", name, n)
				}
				orFatal(amqpChannel(t, "/").QueuePurge(name, false))(t)
			},
			Config: cfg,
		},
	}))
}

func TestAccQueue_holdQueueMessageBlocksDestroy(t *testing.T) {
	testAccPreCheck(t)
	name := uniqueName("hold")
	cleanupQueues(t, "/", name)
	cfg := queueConfig(name, "") + fmt.Sprintf(`
data "queuey_hold_queue" "wait" {
  queue = %q
  delay = "10m"
}
`, name)
	var holdName string
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, "/", name, name+".dead", name+".deferred.600000"),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: func(s *terraform.State) error {
					// What the application does: declare the hold queue from the
					// computed arguments, then publish into it.
					holdName = declareHoldFromState(t, s, "data.queuey_hold_queue.wait")
					publish(t, amqpChannel(t, "/"), holdName, 1)
					return nil
				},
			},
			{
				Config:      cfg,
				Destroy:     true,
				ExpectError: regexp.MustCompile(regexp.QuoteMeta(name) + `\.deferred\.600000:\s+1\s+message,`),
			},
			{
				PreConfig: func() {
					if n := messagesIn(t, "/", holdName); n != 1 {
						t.Fatalf("hold queue holds %d messages after a refused destroy, want 1", n)
					}
					for _, q := range []string{name, name + ".dead"} {
						if !queueExists(t, "/", q) {
							t.Fatalf("a refused destroy deleted %s", q)
						}
					}
				},
				Config: queueConfig(name, "  force_destroy = true") + fmt.Sprintf(`
data "queuey_hold_queue" "wait" {
  queue = %q
  delay = "10m"
}
`, name),
			},
		},
	})
	// force_destroy removed the hold queue with the rest (CheckDestroy above).
}

// waitConsumers waits until the management API lists n consumers on queue:
// consumers appear in its list a moment after they subscribe.
func waitConsumers(t *testing.T, vhost, queue string, n int64) {
	t.Helper()
	waitFor(t, fmt.Sprintf("the management API to list %d consumers on %s", n, queue), func() bool {
		all := orFatal(listQueues(accClient(t), vhost, broker.CheckedWithConsumers))(t)
		return all[queue].Consumers != nil && *all[queue].Consumers == n // nil when queue is not listed
	})
}

// forEachConfig is three queues of one for_each, %[1]s-a, %[1]s-b and %[1]s-c, whose
// force_destroy is the expression %[2]s.
const forEachConfig = requiredQueuey + `
provider "queuey" {}

resource "queuey_queue" "jobs" {
  for_each      = toset(["a", "b", "c"])
  name          = "%[1]s-${each.key}"
  force_destroy = %[2]s
}
`

// A destroy of a for_each whose one queue holds a message deletes the two
// others and refuses that one, and its advice forces that queue alone: after
// force_destroy = true on its key, apply -target changes it in place and
// declares nothing (the siblings this destroy deleted stay deleted), and
// destroy -target deletes it with its message.
func TestAccQueue_destroyForEach(t *testing.T) {
	testAccPreCheck(t)
	t.Parallel()
	base := uniqueName("foreach")
	cleanupQueues(t, "/", base)
	tf := newTerraformCLI(t, fmt.Sprintf(forEachConfig, base, "false"))
	tf.mustRun("apply", "-auto-approve")
	publish(t, amqpChannel(t, "/"), base+"-b", 1)

	out, err := tf.run("destroy", "-auto-approve")
	if err == nil {
		t.Fatalf("destroy with a message in %s-b passed:\n%s", base, out)
	}
	t.Logf("the refused destroy:\n%s", out)
	for _, want := range []string{
		`Queue Not Empty: Destroy Refused`, base + `-b: 1 message, 0 consumers`,
		`force_destroy = true on the resource of queue "` + base + `-b" only`, "terraform apply -target=ADDRESS",
		"terraform destroy -target=ADDRESS", "terraform state list",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("the refused destroy's output lacks %q", want)
		}
	}
	if strings.Contains(out, "force_destroy = true, apply") {
		t.Errorf("the refusal advises a plain apply, which would declare %s-a and %s-c again", base, base)
	}
	for _, k := range []string{"a", "c"} {
		if queueExists(t, "/", base+"-"+k) || queueExists(t, "/", base+"-"+k+".dead") {
			t.Fatalf("the destroy left %s-%s behind", base, k)
		}
	}
	if n := messagesIn(t, "/", base+"-b"); n != 1 || !queueExists(t, "/", base+"-b.dead") {
		t.Fatalf("after the refusal %s-b holds %d messages (want 1), %s-b.dead exists: %v", base, n, base, queueExists(t, "/", base+"-b.dead"))
	}

	// The advice, followed word for word.
	target := `-target=queuey_queue.jobs["b"]`
	tf.writeConfig(fmt.Sprintf(forEachConfig, base, `each.key == "b"`))
	out = tf.mustRun("apply", "-auto-approve", target)
	if !strings.Contains(out, "0 added, 1 changed, 0 destroyed") {
		t.Fatalf("apply %s did not only change force_destroy in place:\n%s", target, out)
	}
	for _, k := range []string{"a", "c"} {
		if queueExists(t, "/", base+"-"+k) {
			t.Fatalf("apply %s declared %s-%s again", target, base, k)
		}
	}
	if n := messagesIn(t, "/", base+"-b"); n != 1 {
		t.Fatalf("apply %s left %d messages in %s-b, want 1", target, n, base)
	}
	out = tf.mustRun("destroy", "-auto-approve", target)
	if !strings.Contains(out, "Resources: 1 destroyed") {
		t.Fatalf("destroy %s:\n%s", target, out)
	}
	for _, q := range []string{"-a", "-b", "-b.dead", "-c"} {
		if queueExists(t, "/", base+q) {
			t.Fatalf("%s%s is still on the broker", base, q)
		}
	}
	if out := tf.mustRun("state", "list"); strings.TrimSpace(out) != "" {
		t.Fatalf("the state still holds resources:\n%s", out)
	}
}
