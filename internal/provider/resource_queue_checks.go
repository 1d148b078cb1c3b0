package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

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

// checkBeforeCreate checks both queues before either is declared: identical ones are adopted, any
// other refused, nothing changed on a refusal. It reports whether q's holding queue exists. The
// vhost check goes out alongside the two look-ups, which cost the same whatever the vhost's size.
func checkBeforeCreate(ctx context.Context, data *providerData, client *broker.Client, vhost string, want wantedQueues) (bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	name := want.main.Name
	vhostErr := make(chan error, 1)
	go func() { vhostErr <- checkVhost(ctx, client, vhost) }()
	holding := topology.RedeclaringQueueName(name)
	existing, err := lookUpQueues(ctx, []string{want.dead.Name, want.main.Name, holding}, func(ctx context.Context, name string) (broker.Queue, error) {
		return client.GetQueue(ctx, vhost, name, broker.Declared)
	})
	if verr := <-vhostErr; verr != nil {
		data.addFailure(&diags, path.Root("vhost"), verr, "Cannot Use Vhost")
		return false, diags
	}
	if err != nil {
		data.addFailure(&diags, path.Empty(), err, "Cannot Read Queue")
		return false, diags
	}
	_, holdingFound := existing[holding]
	return holdingFound, adoptable(vhost, name, want, existing)
}

// adoptable refuses queues of want that exist but are not running or differ.
func adoptable(vhost, name string, want wantedQueues, existing map[string]broker.Queue) diag.Diagnostics {
	var diags diag.Diagnostics
	var down []broker.Queue
	var conflicts []string
	for _, q := range []topology.Queue{want.dead, want.main} {
		got, ok := existing[q.Name]
		switch {
		case ok && !got.Running():
			down = append(down, got)
		case ok:
			conflicts = append(conflicts, describeMismatch(got, q)...)
		}
	}
	if len(down) > 0 {
		diags.AddAttributeError(path.Root("name"), summaryUnavailable,
			fmt.Sprintf("Queue %q in vhost %q exists but is not running:\n  - %s\n"+
				"It can be neither checked nor declared until its node is back (RabbitMQ answers a declaration with "+
				"\"process is stopped by supervisor\"). Nothing was changed. %s, then apply again.",
				name, vhost, joinLines(notRunningLines(down)), bringBackHint))
		return diags
	}
	if len(conflicts) > 0 {
		diags.AddAttributeError(path.Root("name"), "Queue Exists With Different Settings",
			fmt.Sprintf("Queue %q in vhost %q cannot be adopted: an existing queue differs from what the queuey backend declares, "+
				"and RabbitMQ would refuse the application's declaration. Differences:\n  - %s\n"+
				"Nothing was changed. Delete or rename the existing queue (after draining it), or change this resource to match.",
				name, vhost, joinLines(conflicts)))
	}
	return diags
}
