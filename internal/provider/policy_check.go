package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// The policy check: which of a vhost's policies and operator policies apply to the queues of one
// logical queue, and what they do there that breaks the backend's contract (the rule is
// internal/topology's). The plan, the data source queuey_policy_effects and the moves use it.

// policyFindings is what the policies of a vhost do to the queues of one logical queue.
type policyFindings struct {
	vhost, queue string
	suffixes     topology.Suffixes
	// policies are the vhost's, by name, to describe a policy an effect names.
	policies map[policyKey]topology.Policy
	queues   []topology.CheckedQueue
	applied  map[string]topology.Applied
	effects  []topology.Effect
	// unevaluable are the patterns that could not be evaluated, once each.
	unevaluable []topology.PatternError
	// probe is the name of the hold queue that stands for those not declared yet, or "".
	probe string
}

// policyKey names a user policy or an operator policy.
type policyKey struct {
	name     string
	operator bool
}

// topologyPolicies converts the broker's policies to topology's.
func topologyPolicies(list []broker.Policy) []topology.Policy {
	out := make([]topology.Policy, len(list))
	for i, p := range list {
		out[i] = topology.Policy{Name: p.Name, Pattern: p.Pattern, ApplyTo: p.ApplyTo, Priority: p.Priority, Definition: p.Definition}
	}
	return out
}

// queuesToCheck lists the queues of queue to check: q with mainArgs, q.dead, the hold queues and
// the holding queue the listing has, and, with probe, the longest hold queue the backend can
// declare, standing for the hold queues not declared yet.
func queuesToCheck(queue string, s topology.Suffixes, mainArgs map[string]any, listing map[string]broker.Queue, probe bool) ([]topology.CheckedQueue, string) {
	queues := []topology.CheckedQueue{
		{Name: queue, Role: topology.RoleMain, Args: mainArgs},
		{Name: topology.DeadQueueName(queue, s), Role: topology.RoleDead, Args: map[string]any{}},
	}
	var holds []topology.CheckedQueue
	for name := range listing {
		if ttl, ok := topology.ParseHoldQueueName(queue, name, s); ok {
			holds = append(holds, holdToCheck(queue, name, ttl))
		}
	}
	sort.Slice(holds, func(i, j int) bool { return holds[i].TTLMs < holds[j].TTLMs })
	probeName := ""
	if longest := topology.HoldQueueName(queue, topology.MaxDeferralMs, s); probe {
		if _, ok := listing[longest]; !ok {
			probeName = longest
			holds = append(holds, holdToCheck(queue, longest, topology.MaxDeferralMs))
		}
	}
	queues = append(queues, holds...)
	if holding := topology.RedeclaringQueueName(queue); listing[holding].Name != "" {
		queues = append(queues, topology.CheckedQueue{Name: holding, Role: topology.RoleHolding, Args: map[string]any{}})
	}
	return queues, probeName
}

func holdToCheck(queue, name string, ttl int64) topology.CheckedQueue {
	args, _ := topology.HoldQueueArgs(queue, ttl) // ttl parsed from a hold queue name: always valid
	return topology.CheckedQueue{Name: name, Role: topology.RoleHold, TTLMs: ttl, Args: args.Map()}
}

// brokerVersion is the broker's version for picking policies; the newest known when it cannot be
// read (a read that fails here fails for the policies too, and says so there).
func brokerVersion(ctx context.Context, c *broker.Client) topology.BrokerVersion {
	s, err := c.Version(ctx)
	if err != nil {
		return topology.BrokerVersion{}
	}
	v, _ := topology.ParseBrokerVersion(s) // the zero value, the newest, for a version not understood
	return v
}

// findPolicyEffects works out which policies apply to each queue, as broker version v picks them,
// and what they do there.
func findPolicyEffects(v topology.BrokerVersion, pols broker.Policies, queues []topology.CheckedQueue) policyFindings {
	user, op := topologyPolicies(pols.User), topologyPolicies(pols.Operator)
	f := policyFindings{queues: queues, applied: map[string]topology.Applied{}, policies: map[policyKey]topology.Policy{}}
	for _, p := range user {
		f.policies[policyKey{p.Name, false}] = p
	}
	for _, p := range op {
		f.policies[policyKey{p.Name, true}] = p
	}
	seen := map[policyKey]bool{}
	for _, q := range queues {
		applied := topology.ApplyingPoliciesOn(v, q.Name, user, op)
		f.applied[q.Name] = applied
		f.effects = append(f.effects, topology.PolicyEffects(q, applied)...)
		for _, pe := range applied.Unevaluable {
			if k := (policyKey{pe.Policy, pe.Operator}); !seen[k] {
				seen[k] = true
				f.unevaluable = append(f.unevaluable, pe)
			}
		}
	}
	return f
}

// readPolicyFindings reads the vhost's policies and the listing it shares with the refresh, then
// finds what the policies do to queue's queues. mainArgs are q's arguments as it will be declared;
// probe adds the longest hold queue, standing for those not declared yet.
func readPolicyFindings(ctx context.Context, c *broker.Client, vhost, queue string, s topology.Suffixes, mainArgs map[string]any, probe bool) (policyFindings, error) {
	pols, perr := c.Policies(ctx, vhost)
	if perr != nil && !errors.Is(perr, broker.ErrPartial) {
		return policyFindings{}, perr
	}
	list, err := c.ListQueues(ctx, vhost, broker.Declared, broker.Kept)
	if err != nil && !errors.Is(err, broker.ErrNotFound) {
		return policyFindings{}, err
	}
	queues, probeName := queuesToCheck(queue, s, mainArgs, list.Queues, probe)
	f := findPolicyEffects(brokerVersion(ctx, c), pols, queues)
	f.vhost, f.queue, f.suffixes, f.probe = vhost, queue, s, probeName
	return f, perr // nil, or the *broker.PartialError of a listing refused: f holds what the other gave
}

// policyGroup is the effects of one policy on one queue: one diagnostic.
type policyGroup struct {
	queue    topology.CheckedQueue
	policy   policyKey
	tied     bool
	effects  []topology.Effect
	priority int
}

// groups gathers f's effects by queue and policy, in the order of f's queues.
func (f policyFindings) groups() []policyGroup {
	var out []policyGroup
	for _, q := range f.queues {
		index := map[policyKey]int{}
		for _, e := range f.effects {
			if e.Queue != q.Name {
				continue
			}
			k := policyKey{e.Policy, e.Operator}
			i, ok := index[k]
			if !ok {
				i = len(out)
				index[k] = i
				out = append(out, policyGroup{queue: q, policy: k, tied: e.Tied, priority: f.policies[k].Priority})
			}
			out[i].effects = append(out[i].effects, e)
		}
	}
	return out
}

// roleText says what a queue of the topology is for, in the words of a diagnostic.
func (f policyFindings) roleText(q topology.CheckedQueue) string {
	switch {
	case q.Name == f.probe:
		return fmt.Sprintf("the hold queues of %s not declared yet (checked as %s, the longest wait the backend holds)", f.queue, q.Name)
	case q.Role == topology.RoleMain:
		return fmt.Sprintf("%s, the main queue", q.Name)
	case q.Role == topology.RoleDead:
		return fmt.Sprintf("%s, the dead-letter queue of %s", q.Name, f.queue)
	case q.Role == topology.RoleHold:
		return fmt.Sprintf("%s, the hold queue of %s for waits of %d ms", q.Name, f.queue, q.TTLMs)
	}
	return fmt.Sprintf("%s, the holding queue of an interrupted change of %s", q.Name, f.queue)
}

// policyNoun is "policy" or "operator policy".
func policyNoun(operator bool) string {
	if operator {
		return "operator policy"
	}
	return "policy"
}

// effectLines lists each effect as "key = value: what it does".
func effectLines(effects []topology.Effect) string {
	lines := make([]string, len(effects))
	for i, e := range effects {
		lines[i] = fmt.Sprintf("%s = %s: %s", e.Key, renderValue(e.Value), e.Text)
	}
	return joinLines(lines)
}

// renderValue writes a policy value as JSON would: strings quoted, numbers plain.
func renderValue(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

// keysOf names the keys of effects, each once, in their order.
func keysOf(effects []topology.Effect) string {
	var keys []string
	for _, e := range effects {
		if !slices.Contains(keys, e.Key) {
			keys = append(keys, e.Key)
		}
	}
	return strings.Join(keys, ", ")
}
