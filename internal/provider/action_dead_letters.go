package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// What the two dead-letter actions share: their queues, checks, plan warning and progress lines.

// deadLetters is the pair of queues an action works on.
type deadLetters struct {
	vhost, queue, dead string
}

// deadLettersOf resolves an action's queues; ok is false while a value they depend on is unknown.
func deadLettersOf(d *providerData, queue, vhost types.String) (deadLetters, bool) {
	if d == nil || queue.IsUnknown() || vhost.IsUnknown() || d.suffixesUnknown || (vhost.IsNull() && d.vhostUnknown) {
		return deadLetters{}, false
	}
	t := deadLetters{vhost: d.vhost, queue: queue.ValueString()}
	if !vhost.IsNull() {
		t.vhost = vhost.ValueString()
	}
	t.dead = topology.DeadQueueName(t.queue, d.suffixes)
	return t, true
}

// configuredAction, embedded by the actions, takes the provider's data in Configure.
type configuredAction struct{ data *providerData }

func (a *configuredAction) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	a.data, resp.Diagnostics = configuredData(req.ProviderData, resp.Diagnostics)
}

// warnCount is an action's plan warning: how many messages q.dead holds and what invoking does.
// Best effort: skipped when the settings are unknown, the broker is slow or a queue is missing (the
// apply may create it).
func (a *configuredAction) warnCount(ctx context.Context, t deadLetters, summary string, what func(n int64) string, diags *diag.Diagnostics) {
	if !a.data.brokerReady() || !a.data.endpointSet {
		return
	}
	client, d := a.data.brokerClient()
	if d.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, warnTimeout)
	defer cancel()
	queuesList, err := client.ListQueues(ctx, t.vhost, broker.Counted, broker.Live)
	queues := queuesList.Queues
	if err != nil {
		tflog.Debug(ctx, "skipping the plan-time dead-letter count", map[string]any{"error": err.Error()})
		return
	}
	q, ok := queues[t.dead]
	if !ok || q.Messages == nil || *q.Messages == 0 {
		return
	}
	diags.AddWarning(summary, fmt.Sprintf("%s holds %s: invoking %s.", t.dead, countText(q.Messages, "message"), what(*q.Messages)))
}

// checkDeadLetterQueues refuses an action whose q or q.dead is missing, or (running) whose q.dead
// is not running, before anything moves. Each queue is read alone: a listing may leave out a
// starting node's queues.
func checkDeadLetterQueues(ctx context.Context, d *providerData, c *broker.Client, t deadLetters, running bool, diags *diag.Diagnostics) bool {
	for _, name := range []string{t.queue, t.dead} {
		q, err := c.GetQueue(ctx, t.vhost, name, broker.Declared)
		switch {
		case errors.Is(err, broker.ErrNotFound):
			diags.AddError("Queue Not Found", fmt.Sprintf("Queue %q does not exist in vhost %q, so nothing was moved or deleted. "+
				"Check the action's queue and vhost, or apply the queuey_queue that declares it first.", name, t.vhost))
			return false
		case err != nil:
			d.addFailure(diags, path.Empty(), err, "Cannot Read Queue")
			return false
		case running && name == t.dead && !q.Running():
			diags.AddError("Queue Not Running", fmt.Sprintf("Nothing was deleted: %s in vhost %q is not running, most likely "+
				"because the cluster node that hosts it is down or restarting:\n  - %s\n%s, then invoke again.",
				name, t.vhost, joinLines(notRunningLines([]broker.Queue{q})), bringBackHint))
			return false
		}
	}
	return true
}

// progress sends progress lines, never once ctx is done: nobody would read them then.
type progress struct {
	ctx  context.Context
	send func(action.InvokeProgressEvent)
}

func (p progress) say(format string, args ...any) {
	if p.send == nil || p.ctx.Err() != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.send(action.InvokeProgressEvent{Message: fmt.Sprintf(format, args...)})
	}()
	select {
	case <-done:
	case <-p.ctx.Done():
	}
}

const countPoll = 500 * time.Millisecond

// waitForCount lists every poll, up to wait, until the management API reports q.dead empty (its
// counts lag by seconds), so that a destroy right after a purge is not refused on a stale count. It
// reports whether it saw it, and the last count.
func waitForCount(ctx context.Context, c *broker.Client, t deadLetters, wait, poll time.Duration) (bool, *int64) {
	deadline := time.Now().Add(wait)
	var last *int64
	for {
		queuesList, err := c.ListQueues(ctx, t.vhost, broker.CheckedWithConsumers, broker.Live)
		queues := queuesList.Queues
		if err == nil {
			if q, ok := queues[t.dead]; ok && q.Messages != nil {
				last = q.Messages
				if *q.Messages == 0 {
					return true, last
				}
			}
		}
		if time.Now().After(deadline) {
			return false, last
		}
		select {
		case <-ctx.Done():
			return false, last
		case <-time.After(min(poll, time.Until(deadline))):
		}
	}
}

// deadLetterAttributes are both actions' attributes (queue, vhost) and the action's own.
func deadLetterAttributes(queueText string, more map[string]schema.Attribute) map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{
		"queue": schema.StringAttribute{
			MarkdownDescription: queueText,
			Required:            true,
			Validators:          []validator.String{queueNameValidator{}},
		},
		"vhost": schema.StringAttribute{
			MarkdownDescription: "Virtual host of the queues. Defaults to the provider's `vhost`.",
			Optional:            true,
			Validators:          []validator.String{vhostValidator{}},
		},
	}
	maps.Copy(attrs, more)
	return attrs
}
