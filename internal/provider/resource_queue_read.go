package provider

import (
	"context"
	"errors"
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
	// holding is the number of messages in the holding queue of an
	// interrupted change (see redeclare), 0 when not reported; nil when
	// that queue does not exist.
	holding *int64
}

// readTopology finds q, its dead-letter queue and its holding queue (see
// holdingCount). It takes them from the
// process's listing of the vhost when that has answered, and reads what the
// listing lacks (all of it, before the listing answers) with a GET of each
// queue alone, both at once: no refresh waits for a listing, which in a
// crowded vhost takes the broker a while, and a listing answered while a
// node restarts, which can leave queues out, confirms nothing as gone. A q
// not found is gone once the vhost lookup says that the 404 is not a user who
// may not see the vhost (broker.ConfirmQueueGone).
func readTopology(ctx context.Context, c *broker.Client, vhost, name string, s topology.Suffixes) (queueOnBroker, error) {
	dead, holding := topology.DeadQueueName(name, s), topology.RedeclaringQueueName(name)
	found := make(map[string]broker.Queue, 3)
	var missing []string
	// Only a listing already made: a Read never waits for one. The holding
	// queue, which rarely exists, is looked up alone only before the listing
	// has answered.
	listing, lerr := c.ListQueues(ctx, vhost, broker.Declared, broker.KeptIfListed)
	for _, n := range []string{name, dead, holding} {
		if q, ok := listing.Queues[n]; ok {
			found[n] = q
		} else if lerr != nil || n != holding {
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
	if _, ok := found[holding]; ok {
		if t.holding, err = holdingCount(ctx, c, vhost, holding); err != nil {
			return queueOnBroker{}, err
		}
	}
	return t, nil
}

// holdingCount reads the message count of the holding queue, which exists:
// from its own GET where the broker reports it there (4.x), else from a
// listing with counts (3.10), which only a refresh that found the holding
// queue makes; 0 when neither reports it. Gone since: 0, for the update to
// find it gone.
func holdingCount(ctx context.Context, c *broker.Client, vhost, holding string) (*int64, error) {
	q, err := c.GetQueue(ctx, vhost, holding, broker.Counted)
	if err != nil && !errors.Is(err, broker.ErrNotFound) {
		return nil, err
	}
	if q.Messages == nil && err == nil {
		listing, err := c.ListQueues(ctx, vhost, broker.Checked, broker.Recent)
		if err != nil {
			return nil, err
		}
		q.Messages = listing.Queues[holding].Messages
	}
	n := int64(0)
	if q.Messages != nil {
		n = *q.Messages
	}
	return &n, nil
}
