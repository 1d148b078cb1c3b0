package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/queuey/terraform-provider-queuey/internal/broker"
)

// terraform apply -invoke of the purge empties q.dead and nothing else: q
// and the hold queue keep their messages; the plan warned with the count,
// and the management API reports q.dead empty when it ends.
func TestAccAction_purgeLeavesQueueAndHoldQueuesAlone(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureActions)
	t.Parallel()
	name := actionTopology(t, "purge")
	hold := name + ".deferred.600000"
	tf := newTerraformCLI(t, fmt.Sprintf(providerConfig, "/", "", fmt.Sprintf(actionBlock, "queuey_purge_dead_letters", "p", name, "")))
	publishDead(t, amqpChannel(t, "/"), name, 7, nil)
	publish(t, amqpChannel(t, "/"), name, 3)
	publish(t, amqpChannel(t, "/"), hold, 2)

	out := tf.mustRun("apply", "-auto-approve", "-invoke=action.queuey_purge_dead_letters.p")
	t.Logf("terraform apply -invoke prints:\n%s", out)
	if !saysWords(out, name+".dead holds 7 messages: invoking deletes them.") || !saysWords(out, "deleted 7 messages from "+name+".dead") {
		t.Errorf("apply -invoke of the purge:\n%s", out)
	}
	for q, want := range map[string]int{name + ".dead": 0, name: 3, hold: 2} {
		if n := messagesIn(t, "/", q); n != want {
			t.Errorf("%s holds %d messages after the purge, want %d", q, n, want)
		}
	}
	// The management API shows the purge already (a destroy now would not
	// be refused on a stale count).
	queues, err := listQueues(accClient(t), "/", broker.CheckedWithConsumers)
	if q := queues[name+".dead"]; err != nil || q.Messages == nil || *q.Messages != 0 {
		t.Errorf("the management API reports %v messages on %s.dead right after the purge (%v)", q.Messages, name, err)
	}
	out = tf.mustRun("apply", "-auto-approve", "-invoke=action.queuey_purge_dead_letters.p")
	if !saysWords(out, "nothing to move") {
		t.Errorf("a purge of an empty q.dead:\n%s", out)
	}
}

// A queuey_queue with a before_destroy trigger of the purge is destroyed
// although q.dead holds messages: the trigger purges first. Its messages on
// q would still refuse it; here q is empty.
func TestAccAction_beforeDestroyTriggerLetsDestroyThrough(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureActions, featureActionDestroyEvents)
	name := uniqueName("trigger")
	cleanupQueues(t, "/", name)
	config := fmt.Sprintf(`
resource "queuey_queue" "q" {
  name = %[1]q
  lifecycle {
    action_trigger {
      events  = [before_destroy]
      actions = [action.queuey_purge_dead_letters.p]
    }
  }
}

action "queuey_purge_dead_letters" "p" {
  config {
    queue = %[1]q
  }
}
`, name)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(*terraform.State) error {
				publishDead(t, amqpChannel(t, "/"), name, 4, nil)
				return nil
			},
		}},
		CheckDestroy: func(*terraform.State) error {
			for _, q := range []string{name, name + ".dead"} {
				if queueExists(t, "/", q) {
					return fmt.Errorf("%s was not deleted", q)
				}
			}
			return nil
		},
	})
}

// Without the trigger the same destroy is refused, and the refusal names
// the actions: what the trigger test above relies on.
func TestAccAction_destroyRefusalNamesActions(t *testing.T) {
	testAccPreCheck(t)
	needsCLI(t, featureActions)
	t.Parallel()
	name := actionTopology(t, "refusal")
	tf := newTerraformCLI(t, fmt.Sprintf(providerConfig, "/", "", fmt.Sprintf(`
import {
  to = queuey_queue.q
  id = "%%2F/%[1]s"
}

resource "queuey_queue" "q" {
  name         = %[1]q
  message_ttl  = "1h"
  max_priority = 10
}
`, name)))
	tf.mustRun("apply", "-auto-approve")
	// The test's hold queue is left to the test's cleanup.
	deleteOutOfBand(t, name+".deferred.600000")
	publishDead(t, amqpChannel(t, "/"), name, 2, nil)
	out, err := tf.run("destroy", "-auto-approve")
	if err == nil || !saysWords(out, "terraform apply -invoke=action.queuey_redrive_dead_letters."+actionLabel(name)) ||
		!saysWords(out, "before_destroy") {
		t.Errorf("destroy of a q.dead with messages: %v\n%s", err, out)
	}
	if n := messagesIn(t, "/", name+".dead"); n != 2 {
		t.Errorf("%s.dead holds %d messages after the refused destroy, want 2", name, n)
	}
}
