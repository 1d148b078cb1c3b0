package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

var (
	_ resource.ResourceWithConfigure   = (*queueResource)(nil)
	_ resource.ResourceWithIdentity    = (*queueResource)(nil)
	_ resource.ResourceWithImportState = (*queueResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*queueResource)(nil)
	_ resource.ResourceWithMoveState   = (*queueResource)(nil)
)

// NewQueueResource returns the queuey_queue resource.
func NewQueueResource() resource.Resource { return &queueResource{} }

type queueResource struct {
	data *providerData
}

func (r *queueResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_queue"
}

func (r *queueResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "One logical queue of the queuey backend: declares the main queue `q` and its dead-letter queue " +
			"`q.dead` exactly as the application does (durable, not auto-delete, not exclusive, no `x-queue-type`). " +
			"An identical existing queue is adopted; a different one is an error naming each difference. " +
			"Destroy deletes `q`, `q.dead` and the hold queues of `q`, but refuses while any of them holds a message or " +
			"has a consumer unless `force_destroy` is set. A change of `name` or `vhost` replaces the queues. A change of " +
			"`message_ttl` or `max_priority` (or of `q`'s arguments or flags out of band) is an update in place that declares " +
			"`q` alone again, since RabbitMQ cannot change a queue's arguments: `q.dead` and the hold queues, and their " +
			"messages, are left as they are. `force_destroy` and `keep_messages_on_change` change in place and touch no queue.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The vhost and the queue name, each escaped as a URL path segment, joined by a slash: " +
					"`%2F/orders`. This is the import ID.",
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: resourceNameDescription(),
				Required:            true,
				Validators:          []validator.String{queueNameValidator{}},
			},
			"vhost": schema.StringAttribute{
				MarkdownDescription: "Virtual host of the queues. Defaults to the provider's `vhost`. Changing it, or the " +
					"provider's `vhost` when this is unset, replaces the queues.",
				Optional:   true,
				Computed:   true,
				Validators: []validator.String{vhostValidator{}},
			},
			"message_ttl": schema.StringAttribute{
				MarkdownDescription: "Queue-wide message TTL of `q` (`x-message-ttl`), as a Go duration such as `24h`: a whole number " +
					"of milliseconds from `0s` to `4294967295ms` (about 49.7 days). Unset, `q` has no `x-message-ttl`. " +
					"Compared by value: `\"60s\"` equals `\"1m\"`. Changing the value declares `q` again (see `keep_messages_on_change`); " +
					"`q.dead` and the hold queues are not touched.",
				Optional: true,
				// Computed so that the plan may keep the prior spelling of an equal duration.
				Computed:      true,
				Validators:    []validator.String{durationSyntaxValidator{rangeText: messageTTLRange()}, messageTTLValidator{}},
				PlanModifiers: []planmodifier.String{durationByValue{}},
			},
			"max_priority": schema.Int64Attribute{
				MarkdownDescription: "Number of priority levels of `q` (`x-max-priority`), from 1 to 255. Unset, `q` has no " +
					"`x-max-priority`. Changing it declares `q` again (see `keep_messages_on_change`); `q.dead` and the hold queues " +
					"are not touched.",
				Optional:   true,
				Validators: []validator.Int64{int64validator.Between(topology.MinPriority, topology.MaxPriority)},
			},
			"force_destroy": schema.BoolAttribute{
				MarkdownDescription: "Delete the queues on destroy even when they hold messages or have consumers: " +
					"**those messages are lost**. It also deletes a queue whose cluster node is down (its state is not " +
					"`running`) without any check: RabbitMQ 4.x removes such a queue at once, and the messages it kept on that " +
					"node are gone when the node comes back. Defaults to `false`, when destroy deletes nothing while any queue " +
					"holds a message, has a consumer or is not running, and lists each with its counts, or its node and state. " +
					"Changes in place. When it takes effect: a destroy uses the value in state, so for `terraform destroy` " +
					"apply `force_destroy = true` first, then destroy; a replacement (a change of `name` or `vhost`) and a " +
					"change that declares `q` again (`message_ttl`, `max_priority`) use the value planned with them, so setting " +
					"`force_destroy = true` in the same apply as the change is enough. For a change that declares `q` again, " +
					"it deletes `q` without checking its consumers, its hold queues or its node, and `q`'s messages with it " +
					"(never those of `q.dead` or of a hold queue), unless `keep_messages_on_change` is set, which moves them.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
			},
			"keep_messages_on_change": keepMessagesAttribute(),
			"redeclaring_messages":    redeclaringMessagesAttribute(),
			"dead_queue": schema.StringAttribute{
				MarkdownDescription: "Name of the dead-letter queue, e.g. `orders.dead`.",
				Computed:            true,
			},
			"arguments_json": schema.StringAttribute{
				MarkdownDescription: "Declaration arguments of `q` as a JSON object with sorted keys and integer values, e.g. " +
					"`{\"x-max-priority\":10,\"x-message-ttl\":86400000}`; `{}` when there are none: the table the " +
					"provider computes, which applications must declare identically. Only when a refresh finds that the broker's " +
					"`q` differs does it hold what the broker has (with each declaration flag that differs, e.g. `\"auto_delete\":true`), " +
					"so that the plan shows the difference and the apply declares `q` again.",
				CustomType: jsontypes.NormalizedType{},
				Computed:   true,
			},
			"hold_queue_prefix": schema.StringAttribute{
				MarkdownDescription: "What every hold queue of `q` starts with, e.g. `orders.deferred.`.",
				Computed:            true,
			},
			"hold_queue_pattern": schema.StringAttribute{
				MarkdownDescription: "Regular expression matching the names of the hold queues of `q`, e.g. `^orders\\.deferred\\.[0-9]+$`.",
				Computed:            true,
			},
			"queues_pattern": schema.StringAttribute{
				MarkdownDescription: "Regular expression matching `q`, `q.dead` and every hold queue of `q`, e.g. " +
					"`^orders(\\.dead|\\.deferred\\.[0-9]+)?$`: for the `configure` and `read` permissions of an application.",
				Computed: true,
			},
			"write_pattern": schema.StringAttribute{
				MarkdownDescription: "Regular expression for the `write` permission of an application: the whole topology plus " +
					"`amq.default`, which publishing through the default exchange and declaring a queue that dead-letters into `\"\"` " +
					"both need, e.g. `^(amq\\.default|orders(\\.dead|\\.deferred\\.[0-9]+)?)$`.",
				Computed: true,
			},
		},
	}
}

// IdentitySchema is queuey_queue's identity: the queue's name and vhost (queueIdentitySchema).
func (r *queueResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = queueIdentitySchema()
}

func (r *queueResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data, resp.Diagnostics = configuredData(req.ProviderData, resp.Diagnostics)
}

func (r *queueResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan queueModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client, diags := r.data.brokerClient()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	want, diags := wantedWith(plan, r.data.suffixes)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	vhost := plan.Vhost.ValueString()
	name := plan.Name.ValueString()
	holding, diags := checkBeforeCreate(ctx, r.data, client, vhost, want)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	for _, q := range []topology.Queue{want.dead, want.main} {
		if err := declare(ctx, client, vhost, q); err != nil {
			r.data.addFailure(&resp.Diagnostics, path.Empty(), err, "Cannot Declare Queue")
			return
		}
	}
	if holding {
		// A change interrupted after q was deleted left its messages there.
		mv, diags := r.data.messageMover()
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
		if err := drainHolding(ctx, brokerMover{client, mv}, ownedQueuesOf(plan, r.data.suffixes)); err != nil {
			r.data.addFailure(&resp.Diagnostics, path.Empty(), err, "Cannot Move Messages Back")
			return
		}
	}
	plan.Redeclaring = types.Int64Null()
	plan.DeadQueue = types.StringValue(want.dead.Name)
	plan.ArgumentsJSON = jsontypes.NewNormalizedValue(want.main.Args.JSON())
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, name, vhost)...)
}

func (r *queueResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state queueModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	vhost, name := state.Vhost.ValueString(), state.Name.ValueString()
	// Every Read sets an identity, also for state written before identities existed.
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, name, vhost)...)
	if !r.data.brokerReady() {
		// Endpoint or credentials unknown until apply: keep the prior state.
		tflog.Debug(ctx, "broker settings unknown at plan time: keeping the prior state of the queue")
		return
	}
	client, diags := r.data.brokerClient()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	suffixes := suffixesFor(state, r.data.suffixes)
	found, err := readTopology(ctx, client, vhost, name, suffixes)
	if err != nil {
		r.data.addFailure(&resp.Diagnostics, path.Empty(), err, "Cannot Read Queue")
		return
	}
	if found.gone {
		// q or its vhost is gone: the next plan creates them again.
		resp.State.RemoveResource(ctx)
		return
	}
	if down := notRunning(found.main, found.dead); len(down) > 0 {
		resp.Diagnostics.AddWarning("Queue Not Running",
			fmt.Sprintf("In vhost %q these queues of queuey_queue %q exist but are not running, most likely because the cluster node "+
				"that hosts them is down or restarting:\n  - %s\nThey keep their messages on that node, and nothing is planned for them. "+
				"Destroy refuses to delete them while they are not running (unless force_destroy), and declaring them fails. %s.",
				vhost, name, joinLines(notRunningLines(down)), bringBackHint))
	}
	state = observedState(state, found.main, found.deadOK, suffixes)
	state.Redeclaring = types.Int64PointerValue(found.holding)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *queueResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state queueModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	want, diags := wantedWith(plan, r.data.suffixes)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	redeclaring := needsRedeclare(state, want.main.Args.JSON())
	deadMissing := state.DeadQueue.IsNull() || state.DeadQueue.ValueString() != want.dead.Name
	if deadMissing || redeclaring || !state.Redeclaring.IsNull() {
		client, diags := r.data.brokerClient()
		resp.Diagnostics.Append(diags...)
		if resp.Diagnostics.HasError() {
			return
		}
		if resp.Diagnostics.Append(r.updateQueues(ctx, client, state, plan, want, deadMissing, redeclaring)...); resp.Diagnostics.HasError() {
			return
		}
	}
	plan.Redeclaring = types.Int64Null()
	plan.DeadQueue = types.StringValue(want.dead.Name)
	plan.ArgumentsJSON = jsontypes.NewNormalizedValue(want.main.Args.JSON())
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	// From the plan: a -refresh=false plan of an old resource has a null prior identity.
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, plan.Name.ValueString(), plan.Vhost.ValueString())...)
}

// updateQueues declares a missing q.dead, then q when its arguments change, else drains holding.
func (r *queueResource) updateQueues(ctx context.Context, client *broker.Client, state, plan queueModel, want wantedQueues,
	deadMissing, redeclaring bool) diag.Diagnostics {
	var diags diag.Diagnostics
	vhost := plan.Vhost.ValueString()
	if deadMissing {
		if err := declare(ctx, client, vhost, want.dead); err != nil {
			r.data.addFailure(&diags, path.Empty(), vhostMissing(client, vhost, err), "Cannot Declare Queue")
			return diags
		}
	}
	t := ownedQueuesOf(state, r.data.suffixes)
	mv, d := r.data.messageMover()
	if diags.Append(d...); diags.HasError() {
		return diags
	}
	var err error
	if redeclaring {
		err = redeclare(ctx, brokerMover{client, mv}, t, want.main, plan.ForceDestroy.ValueBool(), plan.KeepMessages.ValueBool())
	} else {
		err = drainHolding(ctx, brokerMover{client, mv}, t)
	}
	if err != nil {
		// A missing q counts as empty: a 404 here is the vhost's.
		r.data.addFailure(&diags, path.Empty(), vhostMissing(client, vhost, err), "Cannot Declare Queue Again")
	}
	return diags
}

func (r *queueResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state queueModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client, diags := r.data.brokerClient()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	t := ownedQueuesOf(state, r.data.suffixes)
	force, replacing := destroyIntent(ctx, req.Private, state)
	t.replacing = replacing
	t.noted, _ = notedListing(ctx, req.Private, t, client.CountsAsRecent)
	if err := destroyTopology(ctx, client, t, force); err != nil {
		r.data.addFailure(&resp.Diagnostics, path.Empty(), err, "Cannot Delete Queue")
	}
}

// ModifyPlan fills in the vhost and computed names, checks the name against the suffixes, decides
// replacement (only here: a resource-level ModifyPlan would not see an attribute's RequiresReplace,
// and the warning needs it), and warns when a destroy or replacement meets a busy queue or an
// update declares q again.
func (r *queueResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.data == nil {
		return
	}
	var state *queueModel
	if !req.State.Raw.IsNull() {
		state = &queueModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if req.Plan.Raw.IsNull() {
		if state != nil {
			resp.Diagnostics.Append(noteReplacement(ctx, resp.Private, *state, false, false)...)
			warnIfBusy(ctx, r.data, *state, "destroyed", state.ForceDestroy.ValueBool(), resp.Private, &resp.Diagnostics)
		}
		return
	}
	var plan queueModel
	var configVhost types.String
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	// One attribute costs far less than converting the whole configuration.
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("vhost"), &configVhost)...)
	if resp.Diagnostics.HasError() || !planValues(r.data, &plan, configVhost, state == nil, &resp.Diagnostics) {
		return
	}
	// Only Read sets it; a state that has it plans an update, whose apply moves the messages back.
	plan.Redeclaring = types.Int64Null()
	if state != nil {
		if planReplacement(ctx, *state, plan, resp) {
			warnIfBusy(ctx, r.data, *state, "replaced (destroyed, then created again)", plan.ForceDestroy.ValueBool(), resp.Private, &resp.Diagnostics)
		} else {
			warnIfRedeclaring(ctx, r.data, *state, plan, &resp.Diagnostics)
		}
	}
	checkPolicies(ctx, r.data, plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// MoveState takes over the state of a rabbitmq_queue (moveFromRabbitMQQueue).
func (r *queueResource) MoveState(context.Context) []resource.StateMover {
	return []resource.StateMover{{StateMover: moveFromRabbitMQQueue}}
}

func (r *queueResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	vhost, name, diags := importTarget(ctx, req, r.data)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), queueID(vhost, name))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("vhost"), vhost)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("force_destroy"), false)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("keep_messages_on_change"), false)...)
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, name, vhost)...)
}
