package provider

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

func TestAccHoldQueue_roundTrip(t *testing.T) {
	testAccPreCheck(t)
	name := uniqueName("trip")
	cleanupQueues(t, "/", name)
	cfg := queueConfig(name, "") + fmt.Sprintf(`
data "queuey_hold_queue" "retry" {
  queue = %q
  delay = "1.2s"
}
`, name)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkGone(t, "/", name, name+".dead"),
		Steps: []resource.TestStep{{
			Config: cfg,
			Check: func(s *terraform.State) error {
				hold := declareHoldFromState(t, s, "data.queuey_hold_queue.retry")
				if hold != name+".deferred.2000" {
					return fmt.Errorf("hold queue %q, want %s.deferred.2000", hold, name)
				}
				sent := time.Now()
				publish(t, amqpChannel(t, "/"), hold, 1)
				if n := messagesIn(t, "/", name); n != 0 {
					return fmt.Errorf("%s already holds %d messages", name, n)
				}
				// After the 2s TTL the message dead-letters back to q.
				ch := amqpChannel(t, "/")
				deliveries, err := ch.Consume(name, "", true, false, false, false, nil)
				if err != nil {
					return err
				}
				select {
				case d := <-deliveries:
					waited := time.Since(sent)
					if waited < 1900*time.Millisecond {
						return fmt.Errorf("message came back after %s, before its 2s TTL", waited)
					}
					if d.RoutingKey != name {
						return fmt.Errorf("message came back with routing key %q", d.RoutingKey)
					}
				case <-time.After(15 * time.Second):
					return fmt.Errorf("message did not come back to %s within 15s", name)
				}
				_ = ch.Close()
				// Idle, the hold queue deletes itself 2*TTL (4s) after its
				// last declaration.
				deadline := time.Now().Add(20 * time.Second)
				// Polled through the management API: a passive declare over
				// AMQP would restart the expiry timer.
				for queueExists(t, "/", hold) {
					if time.Now().After(deadline) {
						return fmt.Errorf("idle hold queue %s still exists 20s later", hold)
					}
					time.Sleep(500 * time.Millisecond)
				}
				if waited := time.Since(sent); waited < 3500*time.Millisecond {
					return fmt.Errorf("hold queue expired after %s, before its 4s x-expires", waited)
				}
				return nil
			},
		}},
	})
}
