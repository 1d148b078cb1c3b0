package broker

import (
	"context"
	"time"
)

// Reading queues: ListQueues lists a vhost by Detail and Freshness (types.go), sharing its listings
// (reads.go); GetQueue reads one.

// ListQueues lists every queue of vhost; an error wraps ErrNotFound for a missing vhost.
func (c *Client) ListQueues(ctx context.Context, vhost string, what Detail, fresh Freshness) (QueueList, error) {
	age := c.age(fresh)
	var fetch func(context.Context) (map[string]Queue, error)
	f := &c.checks
	switch what {
	case Declared:
		f, fetch = &c.declared, c.listing(vhost, withDeclarations)
	case Counted:
		f, fetch = &c.counted, c.listing(vhost, withCounts|withDeclarations)
	case Checked:
		fetch = c.checkListingNow(vhost)
	case CheckedWithConsumers:
		return c.queuesWithConsumers(ctx, vhost, age)
	default:
		counts, began, err := listed(ctx, &c.consumers, vhost, fresh, age, c.consumerCountsNow(vhost))
		out := QueueList{Queues: make(map[string]Queue, len(counts)), Began: began}
		for name, n := range counts {
			out.Queues[name] = Queue{Name: name, Vhost: vhost, Consumers: &n}
		}
		return out, err
	}
	queues, began, err := listed(ctx, f, vhost, fresh, age, fetch)
	return QueueList{Queues: queues, Began: began}, err
}

// GetQueue reads one queue alone (Declared, or Counted for any other detail), in time independent
// of the vhost's size; an error wraps ErrNotFound. RabbitMQ 4.3 answers a totals GET of a queue
// whose node is down without the node: such a queue is asked again without totals.
func (c *Client) GetQueue(ctx context.Context, vhost, name string, what Detail) (Queue, error) {
	if what == Declared {
		q, err := c.fetchQueue(ctx, vhost, name, getQuery)
		q.Messages = nil
		return q, err
	}
	q, err := c.fetchQueue(ctx, vhost, name, getCountsQuery)
	if err != nil || (q.State != "" && q.Running()) || q.Node != "" {
		return q, err
	}
	d, err := c.GetQueue(ctx, vhost, name, Declared)
	if err != nil {
		return Queue{}, err
	}
	q.State, q.Node = d.State, d.Node
	return q, nil
}

// CountsAsRecent reports whether a listing begun at began may answer a Recent read: at most
// timing.checkAge ago, with no write since but queue deletes. For a listing another provider
// process made (the plan's).
func (c *Client) CountsAsRecent(began time.Time) bool {
	age := time.Since(began)
	return age >= 0 && age <= c.transport.tm.checkAge && c.lastWrite.Load() < began.UnixNano()
}

// age is the flight freshness of fresh.
func (c *Client) age(fresh Freshness) freshness {
	switch fresh {
	case Recent:
		return freshness(c.transport.tm.checkAge)
	case Kept, KeptIfListed:
		return kept
	}
	return live
}

// listed reads vhost's listing from f as fresh allows.
func listed[T any](ctx context.Context, f *flight[map[string]T], vhost string, fresh Freshness, age freshness,
	fetch func(context.Context) (map[string]T, error)) (map[string]T, time.Time, error) {
	if fresh == KeptIfListed {
		v, began, ok := f.peek(vhost, age, fetch)
		if !ok {
			return nil, time.Time{}, ErrNotListed
		}
		return v, began, nil
	}
	return f.doAt(ctx, vhost, age, fetch)
}

// listing fetches every queue of vhost in one request, asking flags.
func (c *Client) listing(vhost string, flags uint) func(context.Context) (map[string]Queue, error) {
	return func(ctx context.Context) (map[string]Queue, error) { return c.listQueuesNow(ctx, vhost, flags) }
}

// queuesWithConsumers joins the Checked and Consumers listings into a map of the caller's own.
func (c *Client) queuesWithConsumers(ctx context.Context, vhost string, fresh freshness) (QueueList, error) {
	type consumers struct {
		counts map[string]int64
		err    error
	}
	cch := make(chan consumers, 1)
	go func() {
		counts, err := c.consumers.do(ctx, vhost, fresh, c.consumerCountsNow(vhost))
		cch <- consumers{counts, err}
	}()
	shared, began, err := c.checks.doAt(ctx, vhost, fresh, c.checkListingNow(vhost))
	cs := <-cch
	if err == nil {
		err = cs.err
	}
	if err != nil {
		return QueueList{}, err
	}
	queues := make(map[string]Queue, len(shared))
	for name, q := range shared {
		n := cs.counts[name]
		q.Consumers = &n
		queues[name] = q
	}
	return QueueList{Queues: queues, Began: began}, nil
}
