package provider

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Helpers of the dead-letter action tests: a topology declared as the
// backend does, dead letters published with every property set, and the
// messages of a queue read back by message id.

// actionTopology declares q (with a message TTL of an hour) and q.dead in
// vhost "/" through the management API, deleted at cleanup.
func actionTopology(t *testing.T, prefix string) string {
	t.Helper()
	name := uniqueName(prefix)
	cleanupQueues(t, "/", name)
	declareIn(t, "/", name+".dead", nil)
	declareIn(t, "/", name, map[string]any{"x-message-ttl": 3600000, "x-max-priority": 10})
	declareHoldIn(t, "/", name, 600000)
	return name
}

// deadLetter is the i-th dead letter the tests publish: jobMessage(i) with
// every other property set, priority 3, and headers like those of a message
// RabbitMQ dead-lettered.
func deadLetter(queue string, i int) amqp.Publishing {
	p := jobMessage(i)
	p.Headers["x-death"] = []any{amqp.Table{"count": int64(1), "reason": "rejected", "queue": queue, "exchange": "",
		"routing-keys": []any{queue}}}
	p.ContentEncoding, p.Priority, p.CorrelationId, p.ReplyTo = "identity", 3, fmt.Sprintf("corr-%d", i), "replies"
	p.Timestamp, p.Type, p.AppId = time.Unix(1700000000+int64(i), 0).UTC(), "job", "queuey-test"
	return p
}

// publishDead publishes n dead letters of q to q.dead through ch under
// confirms; edit, when given, changes each.
func publishDead(t *testing.T, ch *amqp.Channel, queue string, n int, edit func(i int, p *amqp.Publishing)) {
	t.Helper()
	publishConfirmed(t, ch, queue+".dead", n, func(i int) amqp.Publishing {
		p := deadLetter(queue, i)
		if edit != nil {
			edit(i, &p)
		}
		return p
	})
}

// readBack takes every ready message of queue through ch (the broker counts
// each acknowledged as it delivers it) and returns them in order.
func readBack(t *testing.T, ch *amqp.Channel, queue string) []amqp.Delivery {
	t.Helper()
	var out []amqp.Delivery
	for d, ok, err := ch.Get(queue, true); ok || err != nil; d, ok, err = ch.Get(queue, true) {
		if err != nil {
			t.Fatalf("reading %s back: %v", queue, err)
		}
		out = append(out, d)
	}
	return out
}

// checkNoneLost fails unless every message id m-000000 to m-(n-1) is in one
// of lists at least once; it returns how many are there more than once.
func checkNoneLost(t *testing.T, n int, lists ...[]amqp.Delivery) int {
	t.Helper()
	dups, missing, _ := tally(n, lists...)
	if len(missing) > 0 {
		t.Fatalf("%d messages lost, e.g. %s", len(missing), strings.Join(missing[:min(5, len(missing))], ", "))
	}
	return dups
}

// tally counts, over the deliveries of lists, the message ids m-000000 to
// m-(n-1): the copies beyond the first of each (dups), the ids none holds
// (missing, in order), and the other ids with their counts (unexpected).
func tally(n int, lists ...[]amqp.Delivery) (dups int, missing []string, unexpected map[string]int) {
	unexpected = map[string]int{}
	for _, d := range slices.Concat(lists...) {
		unexpected[d.MessageId]++
	}
	for i := range n {
		id := fmt.Sprintf("m-%06d", i)
		if unexpected[id] == 0 {
			missing = append(missing, id)
		}
		dups += max(unexpected[id]-1, 0)
		delete(unexpected, id)
	}
	return dups, missing, unexpected
}

// actionBlock is an action block of type typ named label for queue, with
// the lines of extra in its config.
const actionBlock = `
action %q %q {
  config {
    queue = %q
%s  }
}
`

// redriveBlock is an action block of queuey_redrive_dead_letters named r.
func redriveBlock(queue, extra string) string {
	return fmt.Sprintf(actionBlock, "queuey_redrive_dead_letters", "r", queue, extra)
}

// saysWords reports whether out holds phrase, whatever the line wrapping
// between its words.
func saysWords(out, phrase string) bool {
	return strings.Contains(flatten(out), flatten(phrase))
}
