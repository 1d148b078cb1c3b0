package provider

import (
	"context"
	"errors"

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

// readTopology finds q and its dead-letter queue in one listing of the
// vhost (shared by the resources a plan refreshes). A listing taken while a
// node restarts can leave queues out for a moment: what it lacks is asked
// for alone before it counts as gone.
func readTopology(ctx context.Context, c *broker.Client, vhost, name string, s topology.Suffixes) (queueOnBroker, error) {
	queues, err := c.ListQueueDeclarations(ctx, vhost)
	if errors.Is(err, broker.ErrNotFound) {
		return queueOnBroker{gone: true}, nil
	}
	if err != nil {
		return queueOnBroker{}, err
	}
	var t queueOnBroker
	var mainOK bool
	if t.main, mainOK, err = confirmQueue(ctx, c, queues, vhost, name); err != nil || !mainOK {
		return queueOnBroker{gone: !mainOK}, err
	}
	t.dead, t.deadOK, err = confirmQueue(ctx, c, queues, vhost, topology.DeadQueueName(name, s))
	return t, err
}
