package broker

import "context"

// vhostLists coordinates the list requests of one vhost.
type vhostLists struct {
	// gen counts the writes to the vhost; a list started before a write
	// finished is never handed to a caller that arrives after it.
	gen      uint64
	inflight *listCall
}

type listCall struct {
	gen    uint64
	done   chan struct{}
	queues map[string]Queue
	err    error
}

// ListQueues returns every queue of vhost by name. Callers that arrive while a
// list request for the same vhost is in flight, with no write to the vhost
// since it was sent, share its answer; everyone else sends a new one. No
// answer is kept after its request completes, so an answer is never older
// than the operation that uses it.
func (c *Client) ListQueues(ctx context.Context, vhost string) (map[string]Queue, error) {
	c.listsMu.Lock()
	vl := c.lists[vhost]
	if vl == nil {
		vl = &vhostLists{}
		c.lists[vhost] = vl
	}
	call := vl.inflight
	if call == nil || call.gen != vl.gen {
		call = &listCall{gen: vl.gen, done: make(chan struct{})}
		vl.inflight = call
		c.listsMu.Unlock()
		// The request must not die with the first caller's context: others share it.
		call.queues, call.err = c.listQueuesNow(context.WithoutCancel(ctx), vhost)
		c.listsMu.Lock()
		if vl.inflight == call {
			vl.inflight = nil
		}
		c.listsMu.Unlock()
		close(call.done)
	} else {
		c.listsMu.Unlock()
		select {
		case <-call.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if call.err != nil {
		return nil, call.err
	}
	return call.queues, nil
}

// wrote records a write to vhost, so that no list started before it is
// handed to later callers.
func (c *Client) wrote(vhost string) {
	c.listsMu.Lock()
	defer c.listsMu.Unlock()
	if vl := c.lists[vhost]; vl != nil {
		vl.gen++
	}
}
