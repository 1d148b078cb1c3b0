package provider

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// A replacement's destroy sees only the prior state, so a force_destroy =
// true planned in the same apply as the change would not reach it. ModifyPlan
// therefore writes a note into the plan's private state; Terraform and
// OpenTofu hand it, with the plan, to both halves of the replacement (the
// create's re-plan gets it as its prior private state, and Delete as
// req.Private). The note also tells Delete that it is half of a
// replacement, for the advice of a refusal.

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
