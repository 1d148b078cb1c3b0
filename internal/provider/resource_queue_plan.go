package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// warnTimeout bounds the broker look-up behind the plan-time warning.
const warnTimeout = 10 * time.Second

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
			r.warnIfBusy(ctx, *state, "destroyed", state.ForceDestroy.ValueBool(), resp.Private, &resp.Diagnostics)
		}
		return
	}
	var plan queueModel
	var configVhost types.String
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	// One attribute costs far less than converting the whole configuration.
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("vhost"), &configVhost)...)
	if resp.Diagnostics.HasError() || !r.planValues(&plan, configVhost, state == nil, &resp.Diagnostics) {
		return
	}
	// Only Read sets it; a state that has it plans an update, whose apply moves the messages back.
	plan.Redeclaring = types.Int64Null()
	if state != nil {
		if planReplacement(ctx, *state, plan, resp) {
			r.warnIfBusy(ctx, *state, "replaced (destroyed, then created again)", plan.ForceDestroy.ValueBool(), resp.Private, &resp.Diagnostics)
		} else {
			r.warnIfRedeclaring(ctx, *state, plan, &resp.Diagnostics)
		}
	}
	r.checkPolicies(ctx, plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// checkPolicies reports, as policy_check says, the policies and operator policies that break the
// contract on plan's queues; skipped while the broker settings, the names or q's arguments are
// unknown.
func (r *queueResource) checkPolicies(ctx context.Context, plan queueModel, diags *diag.Diagnostics) {
	mode := r.data.policyCheck
	if mode == policyCheckOff || !r.data.brokerReady() || !r.data.endpointSet || r.data.suffixesUnknown ||
		plan.Vhost.IsUnknown() || plan.Name.IsUnknown() || plan.ArgumentsJSON.IsUnknown() {
		return
	}
	client, d := r.data.brokerClient()
	want, dw := wantedWith(plan, r.data.suffixes)
	if d.HasError() || dw.HasError() {
		return
	}
	// No bound of its own: the reads fail within the client's retry budget like every other call,
	// so what the plan says does not depend on which of two clocks runs out first.
	vhost, name := plan.Vhost.ValueString(), plan.Name.ValueString()
	f, err := readPolicyFindings(ctx, client, vhost, name, r.data.suffixes, want.main.Args.Map(), true)
	switch {
	case errors.Is(err, broker.ErrNotFound):
		return // a vhost not made yet has no policies
	case errors.Is(err, broker.ErrPartial):
		addPolicyCheckFailed(diags, vhost, name, err, mode)
	case err != nil && causeSummary(err) != "" && !policyReadRefused(err):
		// Unreachable, credentials refused, not the management API: the apply would fail alike, so the
		// plan says so now.
		r.data.addFailure(diags, path.Empty(), err, "Cannot Read Policies")
		return
	case err != nil:
		addPolicyCheckFailed(diags, vhost, name, err, mode)
		return
	}
	addPolicyFindings(diags, f, mode)
}

// policyReadRefused reports whether err is a read of policies refused to a user or token that the
// broker knows (no access to the vhost, no tag, a token without the scope): the check cannot run,
// but declaring may still be allowed.
func policyReadRefused(err error) bool {
	e, ok := errors.AsType[*broker.Error](err)
	return errors.Is(err, broker.ErrUnauthorized) && (!ok || !e.CredentialsRefused)
}

// planValues fills in plan's vhost and computed values and checks the name; false after an error.
func (r *queueResource) planValues(plan *queueModel, configVhost types.String, creating bool, diags *diag.Diagnostics) bool {
	if configVhost.IsNull() {
		if r.data.vhostUnknown {
			plan.Vhost = types.StringUnknown()
		} else {
			plan.Vhost = types.StringValue(r.data.vhost)
		}
	}
	// Only the suffixes enter a queue's names; the granularities do not.
	pureKnown := !r.data.suffixesUnknown
	nameKnown := !plan.Name.IsUnknown()
	name := plan.Name.ValueString()
	s := r.data.suffixes
	if pureKnown && nameKnown {
		if err := topology.ValidateQueueName(name, s); err != nil {
			diags.AddAttributeError(path.Root("name"), "Invalid Queue Name", queueNameError(err, s))
			return false
		}
	}
	if creating && r.data.brokerReady() {
		// Nothing can be created without endpoint and credentials: say so now (nothing is
		// contacted).
		if _, d := r.data.brokerClient(); d.HasError() {
			diags.Append(d...)
			return false
		}
	}
	switch {
	case pureKnown && nameKnown && !plan.Vhost.IsUnknown():
		setDerived(plan, name, plan.Vhost.ValueString(), s)
	default:
		plan.ID = types.StringUnknown()
		plan.HoldQueuePrefix = types.StringUnknown()
		plan.HoldQueuePattern = types.StringUnknown()
		plan.QueuesPattern = types.StringUnknown()
		plan.WritePattern = types.StringUnknown()
	}
	plan.DeadQueue = types.StringUnknown()
	if pureKnown && nameKnown {
		plan.DeadQueue = types.StringValue(topology.DeadQueueName(name, s))
	}
	plan.ArgumentsJSON = jsontypes.NewNormalizedUnknown()
	if nameKnown && !plan.MessageTTL.IsUnknown() && !plan.MaxPriority.IsUnknown() {
		want, d := wantedWith(*plan, r.data.suffixes)
		diags.Append(d...)
		if d.HasError() {
			return false
		}
		plan.ArgumentsJSON = jsontypes.NewNormalizedValue(want.main.Args.JSON())
	}
	return true
}

// warnIfBusy warns of state's busy queues and notes the listing for the destroy; best effort.
func (r *queueResource) warnIfBusy(ctx context.Context, state queueModel, fate string, force bool, private privateKeys, diags *diag.Diagnostics) {
	t := ownedQueuesOf(state, r.data.suffixes)
	diags.Append(noteListing(ctx, private, t, nil, time.Time{})...)
	if !r.data.brokerReady() || !r.data.endpointSet {
		return
	}
	client, d := r.data.brokerClient()
	if d.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, warnTimeout)
	defer cancel()
	// One listing serves the warnings of every queue of the plan.
	list, err := client.ListQueues(ctx, t.vhost, broker.CheckedWithConsumers, broker.Kept)
	queues, began := list.Queues, list.Began
	if err != nil {
		tflog.Debug(ctx, "skipping the plan-time message check", map[string]any{"error": err.Error()})
		return
	}
	diags.Append(noteListing(ctx, private, t, queues, began)...)
	// Counts not reported yet are left to the destroy, which waits for them.
	known, _ := busy(t.owned(queues), false)
	if len(known) == 0 {
		return
	}
	outcome := "Destroy will refuse and delete nothing while they are not empty, unless force_destroy = true."
	if fate != "destroyed" {
		outcome = "The replacement will refuse and delete nothing while they are not empty, unless force_destroy = true " +
			"(set in this same apply, it counts)."
	}
	if force {
		outcome = "force_destroy = true: they will be deleted and THESE MESSAGES WILL BE LOST."
	}
	diags.AddWarning("Queue Holds Messages",
		fmt.Sprintf("Queue %q in vhost %q will be %s, but these of its queues are in use:\n  - %s\n%s",
			state.Name.ValueString(), t.vhost, fate, joinLines(known), outcome))
}

// durationByValue keeps the prior spelling of an equal duration ("5s" for "5000ms").
type durationByValue struct{}

var _ planmodifier.String = durationByValue{}

func (durationByValue) Description(context.Context) string {
	return "Keeps the prior value when the configured duration is equal by value."
}

func (d durationByValue) MarkdownDescription(ctx context.Context) string { return d.Description(ctx) }

func (durationByValue) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.ConfigValue.IsUnknown() {
		return
	}
	if req.ConfigValue.IsNull() {
		resp.PlanValue = types.StringNull()
		return
	}
	if req.State.Raw.IsNull() || req.StateValue.IsNull() || req.StateValue.IsUnknown() {
		return
	}
	cv, errC := time.ParseDuration(req.ConfigValue.ValueString())
	sv, errS := time.ParseDuration(req.StateValue.ValueString())
	if errC == nil && errS == nil && cv == sv {
		resp.PlanValue = req.StateValue
	}
}
