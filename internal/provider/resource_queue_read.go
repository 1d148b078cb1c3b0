package provider

import (
	"context"
	"maps"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// queueOnBroker is what a refresh finds of a logical queue on the broker.
type queueOnBroker struct {
	// gone: q or its vhost no longer exists.
	gone   bool
	main   broker.Queue
	dead   broker.Queue
	deadOK bool
}

// readTopology finds q and its dead-letter queue. It takes them from the
// process's listing of the vhost when that has answered, and reads what the
// listing lacks (all of it, before the listing answers) with a GET of each
// queue alone, both at once: no refresh waits for a listing, which in a
// crowded vhost takes the broker a while, and a listing answered while a
// node restarts, which can leave queues out, confirms nothing as gone. A q
// not found is gone once the vhost lookup says that the 404 is not a user who
// may not see the vhost (broker.ConfirmQueueGone).
func readTopology(ctx context.Context, c *broker.Client, vhost, name string, s topology.Suffixes) (queueOnBroker, error) {
	dead := topology.DeadQueueName(name, s)
	found := make(map[string]broker.Queue, 2)
	var missing []string
	// Only a listing already made: a Read never waits for one.
	listing, _ := c.ListQueues(ctx, vhost, broker.Declared, broker.KeptIfListed)
	for _, n := range []string{name, dead} {
		if q, ok := listing.Queues[n]; ok {
			found[n] = q
		} else {
			missing = append(missing, n)
		}
	}
	looked, err := lookUpQueues(ctx, missing, func(ctx context.Context, q string) (broker.Queue, error) {
		return c.GetQueue(ctx, vhost, q, broker.Declared)
	})
	if err != nil {
		return queueOnBroker{}, err
	}
	maps.Copy(found, looked)
	main, ok := found[name]
	if !ok {
		if err := c.ConfirmQueueGone(ctx, vhost); err != nil {
			return queueOnBroker{}, err
		}
		return queueOnBroker{gone: true}, nil
	}
	t := queueOnBroker{main: main}
	t.dead, t.deadOK = found[dead]
	return t, nil
}
