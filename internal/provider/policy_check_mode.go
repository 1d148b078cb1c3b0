package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// policyCheckMode is the provider setting policy_check: what a plan does when a policy or operator
// policy breaks what the backend's queues promise.
type policyCheckMode int

const (
	policyCheckWarn policyCheckMode = iota
	policyCheckError
	policyCheckOff
)

// policyCheckValues are the setting's values, in the order of the modes.
var policyCheckValues = []string{"warn", "error", "off"}

func policyCheckAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "What a plan of a `queuey_queue` does when a RabbitMQ policy or operator policy would expire, " +
			"drop or delete the backend's messages in one of its queues (`q`, `q.dead`, its hold queues, a holding queue " +
			"of an interrupted change): `warn` (a warning per queue and policy, naming the key, what it does and the fix), " +
			"`error` (the same as plan errors, so nothing is declared: for CI) or `off` (no check). Whatever it says, a " +
			"move of messages (the redrive action, `keep_messages_on_change`) refuses to carry messages into a queue whose " +
			"policy would expire or drop them. See the guide \"Policies and the topology\". Defaults to `warn`.",
		Optional:   true,
		Validators: []validator.String{stringvalidator.OneOf(policyCheckValues...)},
	}
}

// resolvePolicyCheck reads the setting; null (or unknown until apply) is the default, warn.
func resolvePolicyCheck(v types.String) policyCheckMode {
	for i, s := range policyCheckValues {
		if v.ValueString() == s {
			return policyCheckMode(i)
		}
	}
	return policyCheckWarn
}
