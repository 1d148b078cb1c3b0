package provider

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// A replacement's destroy sees only the prior state, so a force_destroy =
// true planned in the same apply as the change would not reach it. ModifyPlan
// therefore writes a note into the plan's private state; Terraform and
// OpenTofu hand it, with the plan, to both halves of the replacement (the
// create's re-plan gets it as its prior private state, and Delete as
// req.Private). The note also tells Delete that it is half of a
// replacement, for the advice of a refusal.

// The rule has three parts, all in this file: planReplacement (ModifyPlan)
// decides replacement by value and writes the note; destroyIntent (Delete)
// reads it back; replacementAdvice is what a refused replacement advises.

// replacementKey is the private state key of the note.
const replacementKey = "replacement"

// replacementNote is what ModifyPlan planned for a replacement.
type replacementNote struct {
	// ForceDestroy is force_destroy as planned (the new value).
	ForceDestroy bool `json:"force_destroy"`
	// Of identifies the state being replaced (see replacedIdentity): the
	// note also travels into the new queue's state, whose identity differs,
	// and must not count there.
	Of string `json:"of"`
}

// privateKeys is the private state of a request or response.
type privateKeys interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// replacedIdentity is what a replacement changes about a queue: at least one
// of these differs between the replaced queue and its replacement.
func replacedIdentity(m queueModel) string {
	return strings.Join([]string{m.Vhost.ValueString(), m.Name.ValueString(), m.MessageTTL.ValueString(),
		m.MaxPriority.String(), m.ArgumentsJSON.ValueString(), m.DeadQueue.ValueString(), m.HoldQueuePrefix.ValueString()}, "\x00")
}

// noteReplacement writes the note of a replacement of state (nil note: not a
// replacement, and any earlier note is removed).
func noteReplacement(ctx context.Context, private privateKeys, state queueModel, replacing, force bool) diag.Diagnostics {
	if !replacing {
		return private.SetKey(ctx, replacementKey, nil)
	}
	b, err := json.Marshal(replacementNote{ForceDestroy: force, Of: replacedIdentity(state)})
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Cannot Plan Replacement", err.Error())
		return diags
	}
	return private.SetKey(ctx, replacementKey, b)
}

// destroyIntent says whether a destroy of state deletes queues that hold
// messages (force_destroy in state, or planned by the replacement this
// destroy is half of), and whether it is half of a replacement.
func destroyIntent(ctx context.Context, private privateKeys, state queueModel) (force, replacing bool) {
	force = state.ForceDestroy.ValueBool()
	b, diags := private.GetKey(ctx, replacementKey)
	var note replacementNote
	if diags.HasError() || len(b) == 0 || json.Unmarshal(b, &note) != nil || note.Of != replacedIdentity(state) {
		return force, false
	}
	return force || note.ForceDestroy, true
}

// replacementPaths is the one place that decides replacement (the schema has
// no RequiresReplace): it lists the attributes whose change replaces the
// queue: name and vhost by value, and names derived from changed suffixes. A
// change of message_ttl, max_priority or arguments_json (drift) is an update
// in place that declares q alone again (see needsRedeclare).
func replacementPaths(state, plan queueModel) path.Paths {
	var out path.Paths
	// A value unknown until apply may turn out different: replace, as the
	// framework's RequiresReplace does, so that apply never has to change
	// the planned action.
	differ := func(a, b types.String) bool {
		return b.IsUnknown() || !a.Equal(b)
	}
	if differ(state.Name, plan.Name) {
		out = append(out, path.Root("name"))
	}
	if differ(state.Vhost, plan.Vhost) {
		out = append(out, path.Root("vhost"))
	}
	if len(out) > 0 {
		// Read-only names follow the attributes above: marking them too
		// would show "# forces replacement" on what the user cannot set.
		return out
	}
	// Otherwise only the provider's suffixes changed them.
	if !state.HoldQueuePrefix.IsNull() && differ(state.HoldQueuePrefix, plan.HoldQueuePrefix) {
		out = append(out, path.Root("hold_queue_prefix"))
	}
	if !state.DeadQueue.IsNull() && differ(state.DeadQueue, plan.DeadQueue) {
		out = append(out, path.Root("dead_queue"))
	}
	return out
}

// planReplacement decides whether plan replaces state (replacementPaths),
// tells Terraform which attributes force it, and writes the note for the
// destroy half; it reports whether the queue is replaced.
func planReplacement(ctx context.Context, state, plan queueModel, resp *resource.ModifyPlanResponse) bool {
	replace := replacementPaths(state, plan)
	resp.RequiresReplace = append(resp.RequiresReplace, replace...)
	resp.Diagnostics.Append(noteReplacement(ctx, resp.Private, state, len(replace) > 0, plan.ForceDestroy.ValueBool())...)
	return len(replace) > 0
}

// replacementAdvice is what a destroy refused as the first half of a
// replacement advises: fix, then apply again; or force it (force says what
// force_destroy does) by setting force_destroy in the same apply as the change.
func replacementAdvice(fix, force string) string {
	return fix + ", then apply again: this destroy is the first half of replacing the queue, and the apply deletes what " +
		"is left, then creates the queues anew. Or set force_destroy = true in the same apply as the change, to " + force + "."
}
