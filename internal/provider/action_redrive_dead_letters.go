package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/mover"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

var (
	_ action.ActionWithConfigure  = (*redriveAction)(nil)
	_ action.ActionWithModifyPlan = (*redriveAction)(nil)
)

// NewRedriveDeadLettersAction returns the queuey_redrive_dead_letters action.
func NewRedriveDeadLettersAction() action.Action { return &redriveAction{} }

// redriveAction moves the messages of q.dead back to q over AMQP.
type redriveAction struct {
	configuredAction
}

func (a *redriveAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_redrive_dead_letters"
}

func (a *redriveAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Moves the messages of a logical queue's dead-letter queue `q.dead` back to `q` over AMQP 0-9-1, " +
			"for after the bug that dead-lettered them is fixed. It counts what `q.dead` holds ready when it begins and moves " +
			"at most that many (or `limit`): each is published to the default exchange with routing key `q`, its body, " +
			"properties and headers kept (`x-death` included; a property set to its zero value, such as priority 0, comes " +
			"back absent, which a classic queue reads the same), under publisher confirms, and removed from `q.dead` only " +
			"once its copy on `q` is confirmed. Any failure stops it, saying how many moved and how many stay; nothing is " +
			"lost (at worst a message is on `q` twice). Needs Terraform 1.14 or later; see the Dead letters guide.",
		Attributes: deadLetterAttributes("Logical queue name `q`: the messages of `q.dead` (the provider's `dead_suffix`) move to `q`.", map[string]schema.Attribute{
			"limit": schema.Int64Attribute{
				MarkdownDescription: "Move at most this many messages (the oldest first), a whole number from 1. Defaults to all " +
					"that `q.dead` holds ready when the action begins.",
				Optional:   true,
				Validators: []validator.Int64{int64validator.AtLeast(1)},
			},
		}),
	}
}

func (a *redriveAction) ModifyPlan(ctx context.Context, req action.ModifyPlanRequest, resp *action.ModifyPlanResponse) {
	var m redriveModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	t, ok := deadLettersOf(a.data, m.Queue, m.Vhost)
	if resp.Diagnostics.HasError() || !ok || m.Limit.IsUnknown() {
		return
	}
	a.warnCount(ctx, t, "Dead Letters Will Be Moved", func(n int64) string {
		if !m.Limit.IsNull() && m.Limit.ValueInt64() < n {
			return fmt.Sprintf("moves the oldest %d of them to %s (limit)", m.Limit.ValueInt64(), t.queue)
		}
		return "moves them to " + t.queue
	}, &resp.Diagnostics)
}

func (a *redriveAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var m redriveModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	t, _ := deadLettersOf(a.data, m.Queue, m.Vhost)
	client, diags := a.data.brokerClient()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() || !checkDeadLetterQueues(ctx, a.data, client, t, false, &resp.Diagnostics) {
		return
	}
	if err := a.refuseLossyRedrive(ctx, client, t); err != nil {
		a.data.addFailure(&resp.Diagnostics, path.Empty(), err, "Dead Letters Not Moved")
		return
	}
	mv, diags := a.data.messageMover()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	p := progress{ctx: ctx, send: resp.SendProgress}
	moved, err := mv.Move(ctx, mover.Move{
		Vhost: t.vhost, From: t.dead, To: t.queue, Limit: int(m.Limit.ValueInt64()),
		Progress: func(moved, total int) {
			if moved < total {
				p.say("moved %d of %d messages from %s to %s", moved, total, t.dead, t.queue)
			}
		},
	})
	switch {
	case err != nil:
		a.data.addFailure(&resp.Diagnostics, path.Empty(), err, "Dead Letters Not All Moved")
	case moved == 0:
		p.say("%s holds no messages: nothing to move", t.dead)
	default:
		p.say("moved %s from %s to %s", countText(new(int64(moved)), "message"), t.dead, t.queue)
	}
}

// refuseLossyRedrive refuses a redrive into a q whose policy would expire or drop what it moves.
func (a *redriveAction) refuseLossyRedrive(ctx context.Context, client *broker.Client, t deadLetters) error {
	q, err := client.GetQueue(ctx, t.vhost, t.queue, broker.Declared)
	if err != nil {
		return err
	}
	return refuseLossyMove(ctx, client, t.vhost, t.queue, a.data.suffixes, fmt.Sprintf("the redrive of %s into %s", t.dead, t.queue),
		topology.CheckedQueue{Name: t.queue, Role: topology.RoleMain, Args: q.Arguments})
}

type redriveModel struct {
	Queue types.String `tfsdk:"queue"`
	Vhost types.String `tfsdk:"vhost"`
	Limit types.Int64  `tfsdk:"limit"`
}
