package provider

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// A change of message_ttl or max_priority, or drift of q's arguments or flags, is an update in
// place that declares q again: RabbitMQ cannot change a queue's arguments, so q is deleted and
// declared anew; q.dead and the hold queues stay. This file holds the rule;
// resource_queue_redeclare_apply.go carries it out.

// needsRedeclare reports whether state's arguments table (or its absence) is not the wanted one.
func needsRedeclare(state queueModel, wantJSON string) bool {
	return state.ArgumentsJSON.IsNull() || state.ArgumentsJSON.IsUnknown() || state.ArgumentsJSON.ValueString() != wantJSON
}

// keepMessagesAttribute is the schema of keep_messages_on_change.
func keepMessagesAttribute() schema.BoolAttribute {
	return schema.BoolAttribute{
		MarkdownDescription: "Keep the messages of `q` when a change of `message_ttl` or `max_priority` (or of `q`'s " +
			"arguments or flags out of band) declares it again: the apply moves them to a holding queue `" +
			"{name}" + topology.RedeclaringSuffix + "` (durable, no arguments), deletes `q` (only if empty and unused) " +
			"and declares it with the new arguments, then moves every message back, over AMQP (`amqp_endpoint`) with " +
			"the guarantee of the `queuey_redrive_dead_letters` action: body, properties and headers kept (priority 0 comes back absent, which a classic queue reads the same), order " +
			"kept, each message removed only after its copy is confirmed. An interrupted change loses nothing: the " +
			"messages wait in the holding queue (see `redeclaring_messages`) and the next apply moves them back. " +
			"Defaults to `false`, when such a change is refused while `q` holds messages. It wins over " +
			"`force_destroy` for `q`'s messages. The change is refused, whatever this says, while `q` has a " +
			"consumer, a hold queue of `q` holds a message, or `q` is not running (unless `force_destroy`). " +
			"Changes in place and touches no queue.",
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(false),
	}
}

// redeclaringMessagesAttribute: set by Read only, so a state that has it plans an update.
func redeclaringMessagesAttribute() schema.Int64Attribute {
	return schema.Int64Attribute{
		MarkdownDescription: "Messages waiting in the holding queue `{name}" + topology.RedeclaringSuffix + "`, left there " +
			"by a change that declared `q` again and was interrupted (see `keep_messages_on_change`); `0` when that " +
			"queue exists but is empty or its count is not reported yet; null when it does not exist. When a refresh " +
			"finds it, the plan shows an update in place, whose apply moves the messages back to `q` and deletes " +
			"the holding queue.",
		Computed: true,
	}
}

// redeclareFacts is what the broker says of q and its hold queues, with the two settings.
type redeclareFacts struct {
	running   bool
	consumers int64
	// messages on q; nil while not reported.
	messages *int64
	// busyHolds describes each hold queue of q that holds a message or whose count is not reported.
	busyHolds   []string
	force, keep bool
}

type redeclareStep int

const (
	// redeclareEmpty: q is empty; guarded delete, then declare.
	redeclareEmpty redeclareStep = iota
	// redeclareMoving: move q's messages aside, delete, declare, move back
	// (keep_messages_on_change).
	redeclareMoving
	// redeclareDropping: delete q unguarded, messages and all, then declare (force_destroy).
	redeclareDropping
)

// redeclareRefusal is why q is not declared again; refuseNone lets it be.
type redeclareRefusal int

const (
	refuseNone redeclareRefusal = iota
	refuseNotRunning
	refuseConsumers
	refuseHolds
	refuseMessages
)

// decideRedeclare is the rule. Without force_destroy, q is not declared again while it is not
// running (4.x deletes such a queue with its messages even if-empty), has a consumer (the
// application would declare the old arguments), or a hold queue holds a message (it would
// dead-letter into no q). Messages, or an unknown count (never taken for 0), are moved with
// keep_messages_on_change, which wins; else force_destroy deletes them; else the change is refused.
func decideRedeclare(f redeclareFacts) (redeclareStep, redeclareRefusal) {
	if !f.force {
		switch {
		case !f.running:
			return redeclareEmpty, refuseNotRunning
		case f.consumers > 0:
			return redeclareEmpty, refuseConsumers
		case len(f.busyHolds) > 0:
			return redeclareEmpty, refuseHolds
		}
	}
	holds := f.messages == nil || *f.messages > 0
	switch {
	case f.keep && holds:
		return redeclareMoving, refuseNone
	case f.force:
		return redeclareDropping, refuseNone
	case holds:
		return redeclareEmpty, refuseMessages
	}
	return redeclareEmpty, refuseNone
}

// redeclareRefusedError is a change that declares q again, refused with nothing changed.
type redeclareRefusedError struct {
	why   redeclareRefusal
	vhost string
	main  broker.Queue
	// args is the table q would be declared with.
	args string
	// holds describes the busy hold queues; longest is their longest TTL in ms.
	holds   []string
	longest int64
}

func (e *redeclareRefusedError) Error() string {
	q := e.main.Name
	var b strings.Builder
	fmt.Fprintf(&b, "Queue %q in vhost %q was not changed: declaring it again with the arguments %s needs it deleted first "+
		"(RabbitMQ cannot change a queue's arguments), and ", q, e.vhost, e.args)
	switch e.why {
	case refuseNotRunning:
		fmt.Fprintf(&b, "it is not running, most likely because the cluster node that hosts it is down or restarting:\n  - %s\n"+
			"Its message count cannot be known, and RabbitMQ may delete such a queue with its messages. %s, then apply again. "+
			"Or set force_destroy = true to delete it without these checks.", joinLines(notRunningLines([]broker.Queue{e.main})), bringBackHint)
	case refuseConsumers:
		fmt.Fprintf(&b, "it has %s. Stop the application that consumes it (its own declaration, with the old arguments, would be "+
			"refused by RabbitMQ once they differ), apply again, then deploy the application declaring the new arguments. "+
			"Or set force_destroy = true to delete it without this check (its messages with it, unless keep_messages_on_change = true).",
			countText(e.main.Consumers, "consumer"))
	case refuseHolds:
		fmt.Fprintf(&b, "these hold queues of it hold messages, which would dead-letter into %s while it does not exist and be lost:\n  - %s\n"+
			"The longest of them keeps a message at most %s (its TTL). Wait until they are empty (stop the application from "+
			"deferring or retrying), then apply again. Or set force_destroy = true to declare %s again without this check.",
			q, joinLines(e.holds), shortDuration(time.Duration(e.longest)*time.Millisecond), q)
	case refuseMessages:
		fmt.Fprintf(&b, "it holds %s. Set keep_messages_on_change = true to move them to %s and back (order, properties and "+
			"headers kept), or force_destroy = true to delete them with the queue (THEY WOULD BE LOST), then apply again.",
			countText(e.main.Messages, "message"), topology.RedeclaringQueueName(q))
	}
	return b.String()
}

func (e *redeclareRefusedError) summary() string {
	switch e.why {
	case refuseNotRunning:
		return "Queue Not Running: Change Refused"
	case refuseConsumers:
		return "Queue In Use: Change Refused"
	case refuseHolds:
		return "Hold Queues Hold Messages: Change Refused"
	}
	return "Queue Holds Messages: Change Refused"
}
