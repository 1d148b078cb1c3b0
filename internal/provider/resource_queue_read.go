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
	// holding is the holding queue's message count (0: not reported); nil when it does not exist.
	holding *int64
}

// readTopology finds q, q.dead and the holding queue: from the process's listing of the vhost when
// it has answered, else (and for what it lacks) with a GET of each queue, both at once, so no
// refresh waits for a crowded vhost's listing, and a listing that left queues out during a restart
// confirms nothing gone. A q not found is gone once broker.ConfirmQueueGone trusts the 404.
func readTopology(ctx context.Context, c *broker.Client, vhost, name string, s topology.Suffixes) (queueOnBroker, error) {
	dead, holding := topology.DeadQueueName(name, s), topology.RedeclaringQueueName(name)
	found := make(map[string]broker.Queue, 3)
	var missing []string
	// Only a listing already made: a Read never waits for one.
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

// holdingCount reads the holding queue's count: its GET on 4.x, else a counted listing (3.10).
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
