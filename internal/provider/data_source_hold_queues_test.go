package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// holdQueuesOnFake returns the hold queues of queue that the data source finds in vhost of the fake
// broker, as "name:ttl:N messages", comma-separated, then its errors (diagText).
func holdQueuesOnFake(t *testing.T, fake *brokertest.Server, s topology.Suffixes, vhost, queue string) string {
	t.Helper()
	data := fakeData(t, fake.URL)
	data.suffixes = s
	holds, diags := (&holdQueuesDataSource{configuredDataSource{data: data}}).listHoldQueues(t.Context(), vhost, queue)
	var out []string
	for _, h := range holds {
		out = append(out, fmt.Sprintf("%s:%d:%s", h.name, h.ttl, countText(h.messages, "message")))
	}
	return strings.Join(out, ", ") + diagText(diags.Errors())
}

// Only exactly queue + deferred suffix + a TTL (decimal, no leading zero, 1
// to the longest hold) is a hold queue of queue: not a name that merely looks
// like one, not another queue's; by ascending TTL, with the messages each holds.
func TestHoldQueuesDataSource_onlyHoldQueues(t *testing.T) {
	t.Parallel()
	fake := brokertest.New(t)
	putIdle(fake, "orders", "orders.dead", "orders.deferred.", "orders.deferred.05", "orders.deferred.0",
		"orders.deferred.5000.bak", "orders.deferred.2147483648", "orders.deferred.x1", "orders2.deferred.1000",
		"xorders.deferred.1000", "orders.deferred.1000.dead", "orders.deferred.2147483647")
	fake.PutQueue("/", brokertest.Queue{Name: "orders.deferred.30000", Durable: true, Messages: brokertest.Count(3)})
	fake.PutQueue("/", brokertest.Queue{Name: "orders.deferred.1000", Durable: true})
	got := holdQueuesOnFake(t, fake, topology.DefaultSuffixes(), "/", "orders")
	want := "orders.deferred.1000:1000:unknown messages, orders.deferred.30000:30000:3 messages, orders.deferred.2147483647:2147483647:0 messages"
	if got != want {
		t.Errorf("hold queues of orders:\n got %s\nwant %s", got, want)
	}

	// The provider's suffixes decide what a hold queue is.
	putIdle(fake, "orders-wait-5000", "orders-wait-05")
	got = holdQueuesOnFake(t, fake, topology.Suffixes{Dead: "-dlq", Deferred: "-wait-"}, "/", "orders")
	if got != "orders-wait-5000:5000:0 messages" {
		t.Errorf("hold queues of orders with deferred_suffix -wait-: %s", got)
	}

	// A vhost that does not exist is an error naming it.
	if got := holdQueuesOnFake(t, fake, topology.DefaultSuffixes(), "nope", "orders"); !strings.Contains(got, `Vhost Not Found: vhost "nope" does not exist`) {
		t.Errorf("a missing vhost: %q", got)
	}
}
