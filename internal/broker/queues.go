package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// Listings ask only for the fields their callers read, without statistics or sorting. Their cost
// grows with the vhost's queues, and more with live message totals (statistics-based counts lag by
// seconds), so a listing carries counts only when a caller needs them.
const (
	withCounts       uint = 1 << iota // messages (ready plus unacknowledged)
	withDeclarations                  // type, durable, auto_delete, exclusive, arguments
)

func listQuery(flags uint) string {
	q := "disable_stats=true&sort=&columns=name,state,node"
	if flags&withDeclarations != 0 {
		q += ",type,durable,auto_delete,exclusive,arguments"
	}
	if flags&withCounts != 0 {
		q = "enable_queue_totals=true&" + q + ",messages"
	}
	return q
}

// getQuery asks for one queue without statistics; getCountsQuery also for its live total (4.x).
const (
	getQuery       = "disable_stats=true&columns=name,type,durable,auto_delete,exclusive,arguments,state,node"
	getCountsQuery = "disable_stats=true&enable_queue_totals=true&columns=name,state,node,messages"
)

type rawQueue struct {
	Name       string         `json:"name"`
	Vhost      string         `json:"vhost"`
	Type       string         `json:"type"`
	Durable    bool           `json:"durable"`
	AutoDelete any            `json:"auto_delete"`
	Exclusive  bool           `json:"exclusive"`
	Arguments  map[string]any `json:"arguments"`
	Messages   *json.Number   `json:"messages"`
	State      string         `json:"state"`
	Node       string         `json:"node"`
}

func (r rawQueue) queue() Queue {
	q := Queue{
		Name: r.Name, Vhost: r.Vhost, Type: r.Type, Durable: r.Durable, Exclusive: r.Exclusive,
		Arguments: r.Arguments, Messages: count(r.Messages), State: r.State, Node: r.Node,
	}
	// RabbitMQ reports auto_delete as a boolean, or "undefined" for some queue types.
	if b, ok := r.AutoDelete.(bool); ok {
		q.AutoDelete = b
	}
	if q.Arguments == nil {
		q.Arguments = map[string]any{}
	}
	return q
}

func count(n *json.Number) *int64 {
	if n == nil {
		return nil
	}
	i, err := n.Int64()
	if err != nil {
		return nil
	}
	return &i
}

// listQueuesNow fetches every queue of vhost in one request.
func (c *Client) listQueuesNow(ctx context.Context, vhost string, flags uint) (map[string]Queue, error) {
	var raw []rawQueue
	op := fmt.Sprintf("listing queues in vhost %q", vhost)
	if err := c.getJSON(ctx, op, "queues/"+url.PathEscape(vhost)+"?"+listQuery(flags), &raw); err != nil {
		return nil, c.confirmNotFound(ctx, vhost, err)
	}
	out := make(map[string]Queue, len(raw))
	for _, r := range raw {
		q := r.queue()
		q.Vhost = vhost
		out[r.Name] = q
	}
	return out, nil
}

// fetchQueue reads one queue with a GET of its own, asking query.
func (c *Client) fetchQueue(ctx context.Context, vhost, name, query string) (Queue, error) {
	var raw rawQueue
	op := fmt.Sprintf("reading queue %q in vhost %q", name, vhost)
	if err := c.getJSON(ctx, op, "queues/"+url.PathEscape(vhost)+"/"+url.PathEscape(name)+"?"+query, &raw); err != nil {
		return Queue{}, err
	}
	q := raw.queue()
	q.Vhost = vhost
	return q, nil
}

// DeclareQueue declares a durable queue, not auto-delete (the only queues this client declares:
// the backend's, whose flags internal/topology states and TestDeclaredFlags ties to these), with
// exactly these arguments, as an application does: no x-queue-type is added. It fails with
// ErrArgumentsConflict or ErrNotFound (no vhost).
func (c *Client) DeclareQueue(ctx context.Context, vhost, name string, args map[string]any) error {
	if args == nil {
		args = map[string]any{}
	}
	body := struct {
		Durable    bool           `json:"durable"`
		AutoDelete bool           `json:"auto_delete"`
		Arguments  map[string]any `json:"arguments"`
	}{Durable: true, AutoDelete: false, Arguments: args}
	op := fmt.Sprintf("declaring queue %q in vhost %q", name, vhost)
	return c.do(ctx, op, http.MethodPut, "queues/"+url.PathEscape(vhost)+"/"+url.PathEscape(name), body, nil)
}

// DeleteQueue deletes a queue; guarded, the broker refuses a busy one (ErrNotEmpty).
func (c *Client) DeleteQueue(ctx context.Context, vhost, name string, guarded bool) error {
	op := fmt.Sprintf("deleting queue %q in vhost %q", name, vhost)
	path := "queues/" + url.PathEscape(vhost) + "/" + url.PathEscape(name)
	if guarded {
		path += "?if-empty=true&if-unused=true"
	}
	defer c.deletedQueue()
	return c.send(ctx, op, http.MethodDelete, path, nil, nil)
}

// checkListingNow lists vhost twice at once, with live totals and without counts: while a node
// stops or starts, RabbitMQ 4.x leaves that node's queues out of a counted listing for a moment. A
// queue only the second has is returned with a nil count: never taken for absent or empty.
func (c *Client) checkListingNow(vhost string) func(context.Context) (map[string]Queue, error) {
	return func(ctx context.Context) (map[string]Queue, error) {
		type names struct {
			queues map[string]Queue
			err    error
		}
		nch := make(chan names, 1)
		go func() {
			queues, err := c.listQueuesNow(ctx, vhost, 0)
			nch <- names{queues, err}
		}()
		queues, err := c.listQueuesNow(ctx, vhost, withCounts)
		ns := <-nch
		if err == nil {
			err = ns.err
		}
		if err != nil {
			return nil, err
		}
		for name, q := range ns.queues {
			if _, ok := queues[name]; !ok {
				q.Messages = nil // left out of the listing with counts: unknown
				queues[name] = q
			}
		}
		return queues, nil
	}
}

// consumerCountsNow counts the consumers of each queue of vhost in one request.
func (c *Client) consumerCountsNow(vhost string) func(context.Context) (map[string]int64, error) {
	return func(ctx context.Context) (map[string]int64, error) { return c.listConsumersNow(ctx, vhost) }
}

func (c *Client) listConsumersNow(ctx context.Context, vhost string) (map[string]int64, error) {
	var consumers []struct {
		Queue struct {
			Name string `json:"name"`
		} `json:"queue"`
	}
	op := fmt.Sprintf("listing consumers in vhost %q", vhost)
	if err := c.getJSON(ctx, op, "consumers/"+url.PathEscape(vhost)+"?columns=queue.name", &consumers); err != nil {
		return nil, c.confirmNotFound(ctx, vhost, err)
	}
	counts := map[string]int64{}
	for _, cs := range consumers {
		counts[cs.Queue.Name]++
	}
	return counts, nil
}
