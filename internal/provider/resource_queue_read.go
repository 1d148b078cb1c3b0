package provider

import (
	"context"

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

// readTopology finds q and its dead-letter queue, each with a GET of that
// queue alone, both at once: what a refresh costs the broker follows the
// queues of the workspace, not the vhost they share (a listing of a vhost
// costs it time in proportion to all its queues). A q that the broker does
// not find is gone, once the vhost lookup says that the 404 is not a user
// who may not see the vhost (broker.ConfirmQueueGone).
func readTopology(ctx context.Context, c *broker.Client, vhost, name string, s topology.Suffixes) (queueOnBroker, error) {
	dead := topology.DeadQueueName(name, s)
	found, err := lookUpQueues(ctx, []string{name, dead}, func(ctx context.Context, q string) (broker.Queue, error) {
		return c.GetQueueDeclaration(ctx, vhost, q)
	})
	if err != nil {
		return queueOnBroker{}, err
	}
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
