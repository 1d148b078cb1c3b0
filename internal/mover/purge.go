package mover

import (
	"context"
	"fmt"
)

// PurgeQueue empties queue in vhost over AMQP (queue.purge, whose reply
// carries the count; the management API's DELETE .../contents answers
// without one) and returns how many messages it removed. It needs read
// permission on the queue. Like every write of this client, it ends what
// the shared reads may answer with (see reads.go): a destroy after it never
// takes the counts of a listing made before it.
func (c *Client) PurgeQueue(ctx context.Context, vhost, queue string) (int, error) {
	c.wrote() // a read that begins while it moves takes nothing from before it either
	defer c.wrote()
	conn, err := c.dialAMQP(ctx, vhost, "terraform-provider-queuey purge "+queue)
	if err != nil {
		return 0, err
	}
	defer c.closeAMQP(conn)
	ch, err := conn.Channel()
	if err != nil {
		return 0, c.channelError("opening a channel", vhost, queue, err)
	}
	// Passive first: a purge of a missing queue must name it, not the
	// channel error of the purge.
	if _, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil); err != nil {
		return 0, c.channelError(fmt.Sprintf("looking up %q", queue), vhost, queue, err)
	}
	n, err := ch.QueuePurge(queue, false)
	if err != nil {
		return 0, c.channelError(fmt.Sprintf("purging %q", queue), vhost, queue, err)
	}
	return n, nil
}
