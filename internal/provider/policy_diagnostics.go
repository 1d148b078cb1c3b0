package provider

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// How the policy check speaks: one diagnostic per queue and policy that breaks the backend's
// contract, naming the policy, each key and value, what it does, and the fix; a warning, or an
// error under policy_check = "error".

// addPolicyFindings reports f's effects and unevaluable patterns as mode says.
func addPolicyFindings(diags *diag.Diagnostics, f policyFindings, mode policyCheckMode) {
	add := diags.AddWarning
	if mode == policyCheckError {
		add = diags.AddError
	}
	for _, g := range f.groups() {
		add(f.summary(g), f.detail(g))
	}
	for _, pe := range f.unevaluable {
		add("Policy Pattern Cannot Be Evaluated", fmt.Sprintf("In vhost %q, %s. Whether it applies to the queues of %s is "+
			"unknown, so the provider cannot say whether it expires, drops or deletes their messages. See which policy the "+
			"broker applies with `rabbitmqctl list_queues -p %s name policy operator_policy`, or write the pattern with "+
			"what policy patterns usually use (anchors, classes, alternation, lookahead).", f.vhost, pe.Error(), f.queue, f.vhost))
	}
}

// policyReadPermissions says what lets a user read a vhost's policies and operator policies.
const policyReadPermissions = "Reading them needs the management tag (or monitoring, policymaker, administrator) and " +
	"access to the vhost (`rabbitmqctl set_user_tags USER management`, `rabbitmqctl set_permissions -p VHOST USER ...`); " +
	"with OAuth 2.0, a token with the scope `rabbitmq.tag:management` and a read scope on the vhost."

// addPolicyCheckFailed says that the check could not run and what would let it.
func addPolicyCheckFailed(diags *diag.Diagnostics, vhost, queue string, err error, mode policyCheckMode) {
	add := diags.AddWarning
	if mode == policyCheckError {
		add = diags.AddError
	}
	next := "It runs again at the next plan."
	if errors.Is(err, broker.ErrUnauthorized) {
		next = policyReadPermissions
	}
	add("Policy Check Could Not Run", fmt.Sprintf("The policies and operator policies of vhost %q could not be read, so this "+
		"plan cannot say whether one of them expires, drops or deletes the messages of %s's queues: %v. %s Set "+
		"policy_check = \"off\" to skip the check.", vhost, queue, err, next))
}

// summary is the diagnostic's summary: which policy breaks which queue.
func (f policyFindings) summary(g policyGroup) string {
	noun := "Policy"
	if g.policy.operator {
		noun = "Operator Policy"
	}
	return fmt.Sprintf("%s %q Breaks Queue %s", noun, g.policy.name, g.queue.Name)
}

// detail says where, what each key does, and the fix.
func (f policyFindings) detail(g policyGroup) string {
	p := f.policies[g.policy]
	tie := ""
	if g.tied {
		tie = " It ties with another matching policy of the same priority: RabbitMQ applies one of them, of its choice, " +
			"so this one may apply at any time."
	}
	return fmt.Sprintf("In vhost %q, the %s %q (pattern %q, apply-to %s, priority %d) applies to %s, and changes what the "+
		"queuey backend relies on:\n  - %s\n%s\nFix: %s", f.vhost, policyNoun(g.policy.operator), p.Name, p.Pattern,
		p.ApplyTo, p.Priority, f.roleText(g.queue), effectLines(g.effects), tie, f.fix(g))
}

// fix says how to leave the topology out of the policy: for a user policy, a pattern computed to
// leave out queue's queues, or a policy of a higher priority without the keys (only one user policy
// applies to a queue); an operator policy merges by the lower value whatever user policies say, so
// only the cluster's operator can change it.
func (f policyFindings) fix(g policyGroup) string {
	p := f.policies[g.policy]
	keys := keysOf(g.effects)
	if g.policy.operator {
		return fmt.Sprintf("an operator policy merges with whichever user policy applies, taking the lower value of %s, "+
			"so no user policy can undo it: ask the cluster's operator to leave these queues out of its pattern or to clear "+
			"it (`rabbitmqctl clear_operator_policy -p %s %s`).", keys, f.vhost, p.Name)
	}
	higher := fmt.Sprintf("add a policy of a priority above %d whose pattern matches these queues and that sets none of %s "+
		"(only one user policy applies to a queue: the highest priority).", p.Priority, keys)
	excluded, err := topology.ExcludeTopologies(p.Pattern, []string{f.queue}, f.suffixes)
	if err != nil {
		return "the policy's pattern cannot be rewritten to leave these queues out (" + err.Error() + "); " + higher
	}
	return fmt.Sprintf("change the policy's pattern to %s, which matches the same names except the queues of %s "+
		"(in Terraform: provider::queuey::policy_pattern_excluding(%s, [%s])), or delete the policy if it was meant for "+
		"these queues alone; or %s", strconv.Quote(excluded), f.queue, strconv.Quote(p.Pattern), strconv.Quote(f.queue), higher)
}
