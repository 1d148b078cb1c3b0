package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// describeMismatch lists how an existing queue differs from the backend's declaration.
func describeMismatch(got broker.Queue, want topology.Queue) []string {
	var out []string
	for _, m := range topology.Mismatches(existingOf(got), want.Args) {
		out = append(out, fmt.Sprintf("queue %q: %s", want.Name, m))
	}
	return out
}

// checkVhost verifies that the vhost exists and makes classic queues; a refusal is a *vhostError.
func checkVhost(ctx context.Context, c *broker.Client, vhost string) error {
	v, err := c.GetVhost(ctx, vhost)
	if errors.Is(err, broker.ErrNotFound) {
		return &vhostError{vhost: vhost, endpoint: c.Endpoint(), missing: true, err: err}
	}
	if err != nil {
		return err
	}
	if !v.IsClassic() {
		setting := "its default_queue_type"
		if node, err := c.NodeDefaultQueueType(ctx); v.FromNode || (err == nil && node == v.DefaultQueueType) {
			setting = "its default_queue_type, which a vhost that sets none takes from the node's default_queue_type in rabbitmq.conf"
		}
		return &vhostError{vhost: vhost, endpoint: c.Endpoint(), queueType: v.DefaultQueueType, setting: setting}
	}
	return nil
}

// lookUpQueues reads the named queues at once, each alone, and returns those that exist.
func lookUpQueues(ctx context.Context, names []string, get func(context.Context, string) (broker.Queue, error)) (map[string]broker.Queue, error) {
	type answer struct {
		q   broker.Queue
		err error
	}
	answers := make([]chan answer, len(names))
	for i, name := range names {
		answers[i] = make(chan answer, 1)
		go func() {
			q, err := get(ctx, name)
			answers[i] <- answer{q, err}
		}()
	}
	out := map[string]broker.Queue{}
	var firstErr error
	for i, name := range names {
		a := <-answers[i]
		switch {
		case a.err == nil:
			out[name] = a.q
		case errors.Is(a.err, broker.ErrNotFound):
		case firstErr == nil:
			firstErr = a.err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// confirmQueue finds the named queue with a GET of that queue alone.
func confirmQueue(ctx context.Context, c *broker.Client, vhost, name string) (broker.Queue, bool, error) {
	q, err := c.GetQueue(ctx, vhost, name, broker.Declared)
	switch {
	case errors.Is(err, broker.ErrNotFound):
		return broker.Queue{}, false, nil
	case err != nil:
		return broker.Queue{}, false, err
	}
	return q, true, nil
}
