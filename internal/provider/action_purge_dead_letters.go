package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var (
	_ action.ActionWithConfigure  = (*purgeAction)(nil)
	_ action.ActionWithModifyPlan = (*purgeAction)(nil)
)

// purgeWait bounds how long a purge waits for the management API to report q.dead empty.
var purgeWait = 15 * time.Second

// NewPurgeDeadLettersAction returns the queuey_purge_dead_letters action.
func NewPurgeDeadLettersAction() action.Action { return &purgeAction{} }

// purgeAction empties q.dead, and only q.dead.
type purgeAction struct {
	configuredAction
}

func (a *purgeAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_purge_dead_letters"
}

func (a *purgeAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Deletes the messages of a logical queue's dead-letter queue `q.dead`, and only those (never `q` " +
			"or a hold queue's), over AMQP 0-9-1 (`queue.purge`), and reports how many it deleted. It refuses a `q.dead` that " +
			"is not running. Then it waits, up to 15s, until the management API reports `q.dead` empty, so that a destroy " +
			"right after it (a `before_destroy` trigger) is not refused on a stale count. Needs Terraform 1.14 or later " +
			"(1.16 for the `before_destroy` event); see the Dead letters guide.",
		Attributes: deadLetterAttributes("Logical queue name `q`: the messages of `q.dead` (the provider's `dead_suffix`) are deleted.", nil),
	}
}

func (a *purgeAction) ModifyPlan(ctx context.Context, req action.ModifyPlanRequest, resp *action.ModifyPlanResponse) {
	var m purgeModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	t, ok := deadLettersOf(a.data, m.Queue, m.Vhost)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	a.warnCount(ctx, t, "Dead Letters Will Be Deleted", func(int64) string { return "deletes them" }, &resp.Diagnostics)
}

func (a *purgeAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var m purgeModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	t, _ := deadLettersOf(a.data, m.Queue, m.Vhost)
	client, diags := a.data.brokerClient()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() || !checkDeadLetterQueues(ctx, a.data, client, t, true, &resp.Diagnostics) {
		return
	}
	mv, diags := a.data.messageMover()
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	p := progress{ctx: ctx, send: resp.SendProgress}
	n, err := mv.Purge(ctx, t.vhost, t.dead)
	if err != nil {
		a.data.addFailure(&resp.Diagnostics, path.Empty(), err, "Dead Letters Not Purged")
		return
	}
	if n == 0 {
		p.say("%s holds no messages: nothing to move, nothing deleted", t.dead)
	} else {
		p.say("deleted %s from %s", countText(new(int64(n)), "message"), t.dead)
	}
	if seen, last := waitForCount(ctx, client, t, purgeWait, countPoll); !seen && ctx.Err() == nil {
		p.say("the management API still reports %s on %s after %s (messages may have arrived since the purge): a destroy "+
			"right now may be refused on that count", countText(last, "message"), t.dead, purgeWait)
	}
}

type purgeModel struct {
	Queue types.String `tfsdk:"queue"`
	Vhost types.String `tfsdk:"vhost"`
}
