package mover

import (
	"context"
	"fmt"
)

// Purge empties queue in vhost (queue.purge, whose reply carries the count; the management API's
// DELETE .../contents answers without one) and returns how many messages it removed. It needs read
// permission on the queue. Config.Wrote is called before and after it, failed or not, so that no
// listing made before it answers a read after it.
func (m *Mover) Purge(ctx context.Context, vhost, queue string) (int, error) {
	m.wrote() // a read that begins while it purges takes nothing from before it either
	defer m.wrote()
	conn, err := m.dial(ctx, vhost, "terraform-provider-queuey purge "+queue)
	if err != nil {
		return 0, err
	}
	defer m.close(conn)
	ch, err := conn.Channel()
	if err != nil {
		return 0, m.channelError("opening a channel", vhost, queue, err)
	}
	// Passive first: a purge of a missing queue must name it, not the channel error of the purge.
	if _, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil); err != nil {
		return 0, m.channelError(fmt.Sprintf("looking up %q", queue), vhost, queue, err)
	}
	n, err := ch.QueuePurge(queue, false)
	if err != nil {
		return 0, m.channelError(fmt.Sprintf("purging %q", queue), vhost, queue, err)
	}
	return n, nil
}
