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

// A replacement's destroy sees only the prior state, so a force_destroy = true planned with the
// change would not reach it. ModifyPlan writes a note into the plan's private state, which
// Terraform and OpenTofu hand to both halves of the replacement; it also tells Delete that it is
// half of one, for the advice. planReplacement writes the note, destroyIntent reads it,
// replacementAdvice is what a refused replacement advises.

const replacementKey = "replacement"

// replacementNote is what ModifyPlan planned for a replacement.
type replacementNote struct {
	// ForceDestroy is force_destroy as planned (the new value).
	ForceDestroy bool `json:"force_destroy"`
	// Of identifies the replaced state: the note also travels into the new state, where it must not
	// count.
	Of string `json:"of"`
}

// privateKeys is the private state of a request or response.
type privateKeys interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// replacedIdentity is what a replacement changes about a queue: at least one of these differs.
func replacedIdentity(m queueModel) string {
	return strings.Join([]string{m.Vhost.ValueString(), m.Name.ValueString(), m.MessageTTL.ValueString(),
		m.MaxPriority.String(), m.ArgumentsJSON.ValueString(), m.DeadQueue.ValueString(), m.HoldQueuePrefix.ValueString()}, "\x00")
}

// noteReplacement writes the note of a replacement of state (nil removes it).
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

// destroyIntent says whether a destroy of state may delete busy queues, and if it replaces.
func destroyIntent(ctx context.Context, private privateKeys, state queueModel) (force, replacing bool) {
	force = state.ForceDestroy.ValueBool()
	b, diags := private.GetKey(ctx, replacementKey)
	var note replacementNote
	if diags.HasError() || len(b) == 0 || json.Unmarshal(b, &note) != nil || note.Of != replacedIdentity(state) {
		return force, false
	}
	return force || note.ForceDestroy, true
}

// replacementPaths is the one place that decides replacement (the schema has no RequiresReplace):
// name and vhost by value, and names derived from changed suffixes. A change of message_ttl,
// max_priority or arguments_json is an update in place (needsRedeclare).
func replacementPaths(state, plan queueModel) path.Paths {
	var out path.Paths
	// A value unknown until apply may differ: replace, as RequiresReplace does.
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
		// Read-only names follow: marking them would show "# forces replacement" on them.
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

// planReplacement decides replacement, marks the attributes forcing it, and writes the note.
func planReplacement(ctx context.Context, state, plan queueModel, resp *resource.ModifyPlanResponse) bool {
	replace := replacementPaths(state, plan)
	resp.RequiresReplace = append(resp.RequiresReplace, replace...)
	resp.Diagnostics.Append(noteReplacement(ctx, resp.Private, state, len(replace) > 0, plan.ForceDestroy.ValueBool())...)
	return len(replace) > 0
}

// replacementAdvice is what a refused replacement advises (force says what force_destroy does).
func replacementAdvice(fix, force string) string {
	return fix + ", then apply again: this destroy is the first half of replacing the queue, and the apply deletes what " +
		"is left, then creates the queues anew. Or set force_destroy = true in the same apply as the change, to " + force + "."
}
