package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// warnIfRedeclaring warns about an update that declares q again (with q's counts and what the apply
// will do with its messages: decideRedeclare on what the listing shows) and about messages an
// interrupted change left in the holding queue. Best effort, as warnIfBusy: skipped when the broker
// settings are unknown or the broker does not answer quickly, never an error.
func warnIfRedeclaring(ctx context.Context, data *providerData, state, plan queueModel, diags *diag.Diagnostics) {
	redeclaring := !plan.ArgumentsJSON.IsUnknown() && needsRedeclare(state, plan.ArgumentsJSON.ValueString())
	if (!redeclaring && state.Redeclaring.IsNull()) || !data.brokerReady() || !data.endpointSet {
		return
	}
	client, d := data.brokerClient()
	if d.HasError() {
		return
	}
	t := ownedQueuesOf(state, data.suffixes)
	ctx, cancel := context.WithTimeout(ctx, warnTimeout)
	defer cancel()
	list, err := client.ListQueues(ctx, t.vhost, broker.CheckedWithConsumers, broker.Kept)
	queues := list.Queues
	if err != nil {
		tflog.Debug(ctx, "skipping the plan-time check of a change", map[string]any{"error": err.Error()})
		return
	}
	holding := topology.RedeclaringQueueName(t.queue)
	if h, ok := queues[holding]; ok {
		diags.AddWarning("Interrupted Change Found", fmt.Sprintf("%s holds %s of an interrupted change: the apply moves them back to %s "+
			"(vhost %q) and deletes %s.", holding, countText(h.Messages, "message"), t.queue, t.vhost, holding))
	}
	if redeclaring {
		diags.AddWarning("Queue Will Be Declared Again", redeclareWarning(t, queues, plan))
	}
}

// redeclareWarning says what the apply of plan will do to q, from a listing's queues.
func redeclareWarning(t ownedQueues, queues map[string]broker.Queue, plan queueModel) string {
	zero := int64(0)
	main, ok := queues[t.queue]
	if !ok {
		main = broker.Queue{Name: t.queue, Messages: &zero, Consumers: &zero}
	}
	var holds []broker.Queue
	for _, q := range t.owned(queues) {
		if _, isHold := topology.ParseHoldQueueName(t.queue, q.Name, t.suffixes); isHold {
			holds = append(holds, q)
		}
	}
	f := redeclareFacts{running: main.Running(), messages: main.Messages, force: plan.ForceDestroy.ValueBool(), keep: plan.KeepMessages.ValueBool()}
	if main.Consumers != nil {
		f.consumers = *main.Consumers
	}
	f.busyHolds, _ = busy(holds, false)
	head := fmt.Sprintf("Queue %q in vhost %q will be declared again with the arguments %s: RabbitMQ cannot change a queue's "+
		"arguments, so the apply deletes it and declares it anew (%s and the hold queues are not touched). It holds %s and has %s. ",
		t.queue, t.vhost, plan.ArgumentsJSON.ValueString(), topology.DeadQueueName(t.queue, t.suffixes), countText(main.Messages, "message"),
		countText(main.Consumers, "consumer"))
	return head + redeclareOutcome(t, f) + " Deploy the application declaring the same new arguments after the apply: " +
		"RabbitMQ refuses a declaration whose arguments differ from the queue's."
}

// redeclareOutcome says what the apply will do, by the rule.
func redeclareOutcome(t ownedQueues, f redeclareFacts) string {
	holding := topology.RedeclaringQueueName(t.queue)
	step, why := decideRedeclare(f)
	switch why {
	case refuseNotRunning:
		return "The apply will refuse and change nothing: it is not running (its node is down), unless force_destroy = true."
	case refuseConsumers:
		return "The apply will refuse and change nothing while it has a consumer: stop the application first (or set force_destroy = true)."
	case refuseHolds:
		return fmt.Sprintf("The apply will refuse and change nothing while these hold queues hold messages (or set force_destroy = true):\n  - %s\n",
			joinLines(f.busyHolds))
	case refuseMessages:
		return fmt.Sprintf("The apply will refuse and change nothing while it holds messages, unless keep_messages_on_change = true "+
			"(moves them to %s and back) or force_destroy = true (THEY WOULD BE LOST).", holding)
	}
	switch step {
	case redeclareMoving:
		return fmt.Sprintf("keep_messages_on_change = true: the apply moves its messages to %s and back to the new queue.", holding)
	case redeclareDropping:
		return "force_destroy = true: the apply deletes it without checks, and ANY MESSAGE IT HOLDS WILL BE LOST."
	}
	return "It is empty: the apply deletes it (only if still empty and unused) and declares it anew."
}
