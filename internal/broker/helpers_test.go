package broker

import (
	"context"
	"net/http"
	"time"
)

// observeAttempts calls f before every HTTP attempt. Call it before the
// client is used.
func (c *Client) observeAttempts(f func(*http.Request)) { c.transport.onAttempt = f }

// queuesOf lists vhost through c with what and fresh, for a test that wants
// only the queues.
func queuesOf(c *Client, ctx context.Context, vhost string, what Detail, fresh Freshness) (map[string]Queue, error) {
	l, err := c.ListQueues(ctx, vhost, what, fresh)
	return l.Queues, err
}

// keptWithConsumers is the kept CheckedWithConsumers listing of vhost "v",
// with when the answer's request began.
func keptWithConsumers(c *Client, ctx context.Context) (map[string]Queue, time.Time, error) {
	l, err := c.ListQueues(ctx, "v", CheckedWithConsumers, Kept)
	return l.Queues, l.Began, err
}
