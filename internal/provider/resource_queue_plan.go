package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// checkPolicies reports, as policy_check says, the policies and operator policies that break the
// contract on plan's queues; skipped while the broker settings, the names or q's arguments are
// unknown.
func checkPolicies(ctx context.Context, data *providerData, plan queueModel, diags *diag.Diagnostics) {
	mode := data.policyCheck
	if mode == policyCheckOff || !data.brokerReady() || !data.endpointSet || data.suffixesUnknown ||
		plan.Vhost.IsUnknown() || plan.Name.IsUnknown() || plan.ArgumentsJSON.IsUnknown() {
		return
	}
	client, d := data.brokerClient()
	want, dw := wantedWith(plan, data.suffixes)
	if d.HasError() || dw.HasError() {
		return
	}
	// No bound of its own: the reads fail within the client's retry budget like every other call,
	// so what the plan says does not depend on which of two clocks runs out first.
	vhost, name := plan.Vhost.ValueString(), plan.Name.ValueString()
	f, err := readPolicyFindings(ctx, client, vhost, name, data.suffixes, want.main.Args.Map(), true)
	switch {
	case errors.Is(err, broker.ErrNotFound):
		return // a vhost not made yet has no policies
	case errors.Is(err, broker.ErrPartial):
		addPolicyCheckFailed(diags, vhost, name, err, mode)
	case err != nil && causeSummary(err) != "" && !policyReadRefused(err):
		// Unreachable, credentials refused, not the management API: the apply would fail alike, so the
		// plan says so now.
		data.addFailure(diags, path.Empty(), err, "Cannot Read Policies")
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
func planValues(data *providerData, plan *queueModel, configVhost types.String, creating bool, diags *diag.Diagnostics) bool {
	if configVhost.IsNull() {
		if data.vhostUnknown {
			plan.Vhost = types.StringUnknown()
		} else {
			plan.Vhost = types.StringValue(data.vhost)
		}
	}
	// Only the suffixes enter a queue's names; the granularities do not.
	pureKnown := !data.suffixesUnknown
	nameKnown := !plan.Name.IsUnknown()
	name := plan.Name.ValueString()
	s := data.suffixes
	if pureKnown && nameKnown {
		if err := topology.ValidateQueueName(name, s); err != nil {
			diags.AddAttributeError(path.Root("name"), "Invalid Queue Name", queueNameError(err, s))
			return false
		}
	}
	if creating && data.brokerReady() {
		// Nothing can be created without endpoint and credentials: say so now (nothing is
		// contacted).
		if _, d := data.brokerClient(); d.HasError() {
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
		want, d := wantedWith(*plan, data.suffixes)
		diags.Append(d...)
		if d.HasError() {
			return false
		}
		plan.ArgumentsJSON = jsontypes.NewNormalizedValue(want.main.Args.JSON())
	}
	return true
}

// warnIfBusy warns of state's busy queues and notes the listing for the destroy; best effort.
func warnIfBusy(ctx context.Context, data *providerData, state queueModel, fate string, force bool, private privateKeys, diags *diag.Diagnostics) {
	t := ownedQueuesOf(state, data.suffixes)
	diags.Append(noteListing(ctx, private, t, nil, time.Time{})...)
	if !data.brokerReady() || !data.endpointSet {
		return
	}
	client, d := data.brokerClient()
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
