package topology

import (
	"errors"
	"fmt"
	"slices"
)

// Policy keys that change what the backend's queues do to their messages.
const (
	PolicyMessageTTL           = "message-ttl"
	PolicyExpires              = "expires"
	PolicyMaxLength            = "max-length"
	PolicyMaxLengthBytes       = "max-length-bytes"
	PolicyOverflow             = "overflow"
	PolicyDeadLetterExchange   = "dead-letter-exchange"
	PolicyDeadLetterRoutingKey = "dead-letter-routing-key"
)

// Overflow behaviours; drop-head is RabbitMQ's default.
const (
	OverflowDropHead         = "drop-head"
	OverflowRejectPublish    = "reject-publish"
	OverflowRejectPublishDLX = "reject-publish-dlx"
)

// HarmlessPolicyKeys are policy keys that never break the backend's contract on any of its queues
// (dead-letter-routing-key: only with a dead-letter exchange, which is judged on its own; overflow:
// only with a length limit, which is; the others tune storage, replication, federation or
// consumers). A key outside both this list and the judged ones is harmless too.
var HarmlessPolicyKeys = []string{
	PolicyDeadLetterRoutingKey, PolicyOverflow, "queue-mode", "queue-version", "queue-master-locator",
	"queue-leader-locator", "ha-mode", "ha-params", "ha-sync-mode", "ha-sync-batch-size",
	"ha-promote-on-shutdown", "ha-promote-on-failure", "federation-upstream", "federation-upstream-set",
	"alternate-exchange", "consumer-timeout", "max-in-memory-length", "max-in-memory-bytes",
}

// judgedKeys are the keys an effect may name, in the order effects are listed.
var judgedKeys = []string{PolicyExpires, PolicyMessageTTL, PolicyMaxLength, PolicyMaxLengthBytes, PolicyDeadLetterExchange}

// minKeys take the lower of argument and policy (rabbit_amqqueue_process:process_args_policy/1,
// res_min) and of user and operator policy (rabbit_policies:merge_policy_value/3).
var minKeys = []string{PolicyExpires, PolicyMessageTTL, PolicyMaxLength, PolicyMaxLengthBytes}

// argWinsKeys let the queue's argument win over any policy (process_args_policy/1, res_arg).
var argWinsKeys = []string{PolicyOverflow, PolicyDeadLetterExchange, PolicyDeadLetterRoutingKey}

// Role is what one of a topology's queues is for.
type Role int

// The roles: q, q.dead, a hold queue of ttl_ms, and {q}.redeclaring.
const (
	RoleMain Role = iota
	RoleDead
	RoleHold
	RoleHolding
)

// String names the role as the data source shows it.
func (r Role) String() string {
	switch r {
	case RoleMain:
		return "main"
	case RoleDead:
		return "dead"
	case RoleHold:
		return "hold"
	case RoleHolding:
		return "holding"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// MergedPolicyDefinition merges a user and an operator policy definition as the management API's
// effective_policy_definition does (rabbit_policy:merge_operator_definitions/2): the lower value
// of the min keys, the operator's overflow, queue-version and booleans, else the user's value.
func MergedPolicyDefinition(user, operator map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range operator {
		out[k] = v
	}
	for k, v := range user {
		op, both := operator[k]
		if !both || !operatorWins(k, v, op) {
			out[k] = v
		}
	}
	for _, k := range minKeys {
		if u, ok := user[k]; ok {
			if op, ok := operator[k]; ok {
				out[k] = erlangMin(u, op)
			}
		}
	}
	return out
}

// operatorWins reports whether the operator's value of key k beats the user's (merge_policy_value/3).
func operatorWins(k string, user, op any) bool {
	if k == PolicyOverflow || k == "queue-version" {
		return true
	}
	_, ub := user.(bool)
	_, ob := op.(bool)
	return ub && ob
}

// erlangMin is erlang:min/2 over what a definition holds: numbers order before anything else, and
// of two non-numbers the first is kept.
func erlangMin(a, b any) any {
	ai, aok := asInt(a)
	bi, bok := asInt(b)
	if bok && (!aok || bi < ai) {
		return b
	}
	return a
}

// EffectiveDefinition returns, by policy key (e.g. "message-ttl"), what a classic queue with
// arguments args runs with under the user and operator policy definitions: the min keys take the
// lowest of argument and policies, the argument wins for overflow and the dead-letter keys, and
// every other key comes from the policies alone. Arguments without a policy key are left out.
func EffectiveDefinition(args map[string]any, user, operator map[string]any) map[string]any {
	out := MergedPolicyDefinition(user, operator)
	for _, k := range minKeys {
		if a, ok := args["x-"+k]; ok {
			if p, ok := out[k]; ok {
				out[k] = erlangMin(p, a)
			} else {
				out[k] = a
			}
		}
	}
	for _, k := range argWinsKeys {
		if a, ok := args["x-"+k]; ok {
			out[k] = a
		}
	}
	return out
}

// CheckedQueue is one queue of a topology to check: its name, role, arguments (as declared or as
// the broker reports them) and, for a hold queue, its TTL.
type CheckedQueue struct {
	Name  string
	Role  Role
	TTLMs int64
	Args  map[string]any
}

// Effect is one policy key that breaks the backend's contract on a queue. Value is the policy's
// own value, Effective what the queue runs with; Tied marks a policy that ties with the applying
// one, so applies at the broker's choice.
type Effect struct {
	Queue     string
	Role      Role
	Policy    string
	Operator  bool
	Tied      bool
	Key       string
	Value     any
	Effective any
	Text      string
}

// PolicyEffects returns the effects of the applying policies on q: for each judged key, every
// policy (user or operator) whose own value, set beside q's arguments, breaks the contract, then
// the same for each tied policy in place of the one applying.
func PolicyEffects(q CheckedQueue, applied Applied) []Effect {
	user, op := definitionOf(applied.User), definitionOf(applied.Operator)
	effects := effectsOf(q, applied.User, false, user, op)
	effects = append(effects, effectsOf(q, applied.Operator, true, user, op)...)
	for i := range applied.TiedUser {
		t := &applied.TiedUser[i]
		effects = append(effects, tied(effectsOf(q, t, false, t.Definition, op))...)
	}
	for i := range applied.TiedOperator {
		t := &applied.TiedOperator[i]
		effects = append(effects, tied(effectsOf(q, t, true, user, t.Definition))...)
	}
	return effects
}

func definitionOf(p *Policy) map[string]any {
	if p == nil {
		return nil
	}
	return p.Definition
}

func tied(effects []Effect) []Effect {
	for i := range effects {
		effects[i].Tied = true
	}
	return effects
}

// effectsOf returns the effects of policy p (the user or operator one, by operator) on q, with the
// effective values of user and op together.
func effectsOf(q CheckedQueue, p *Policy, operator bool, user, op map[string]any) []Effect {
	if p == nil {
		return nil
	}
	eff := EffectiveDefinition(q.Args, user, op)
	var effects []Effect
	for _, k := range judgedKeys {
		v, ok := p.Definition[k]
		if !ok || !supplies(q.Args, k, v, operator, user) || !breaks(q, k, v) {
			continue
		}
		effects = append(effects, Effect{
			Queue: q.Name, Role: q.Role, Policy: p.Name, Operator: operator, Key: k,
			Value: v, Effective: eff[k], Text: effectText(q, k, v, overflowOf(eff)),
		})
	}
	return effects
}

// supplies reports whether a policy's value v of key k would set what q runs with, set beside q's
// arguments: for a min key, a value below the argument's or where there is none; for the
// dead-letter exchange, where q has none (and, for an operator policy, the user policy has none).
func supplies(args map[string]any, k string, v any, operator bool, user map[string]any) bool {
	a, has := args["x-"+k]
	if slices.Contains(minKeys, k) {
		return !has || lower(v, a)
	}
	_, userHas := user[k]
	return !has && (!operator || !userHas)
}

// lower reports whether erlang:min/2 would take v over a: a lower number, or a number over a
// non-number.
func lower(v, a any) bool {
	vi, vok := asInt(v)
	ai, aok := asInt(a)
	return vok && (!aok || vi < ai)
}

// breaks reports whether a policy value v of key k, applying, breaks the contract for q.
func breaks(q CheckedQueue, k string, v any) bool {
	if k == PolicyDeadLetterExchange {
		return q.Role == RoleMain
	}
	if q.Role != RoleHold {
		return true
	}
	n, ok := asInt(v)
	switch k {
	case PolicyMessageTTL:
		return !ok || n < q.TTLMs
	case PolicyExpires:
		return !ok || n <= q.TTLMs
	}
	return true
}

func overflowOf(eff map[string]any) string {
	if s, ok := eff[PolicyOverflow].(string); ok {
		return s
	}
	return OverflowDropHead
}

// effectText says in plain words what value v of key k does to q's messages.
func effectText(q CheckedQueue, k string, v any, overflow string) string {
	val := renderAny(v)
	switch k {
	case PolicyExpires:
		return expiresText(q, val)
	case PolicyMessageTTL:
		return ttlText(q, val)
	case PolicyMaxLength, PolicyMaxLengthBytes:
		return lengthText(q, k, val, overflow)
	}
	return fmt.Sprintf("sends messages that %s rejects or expires to the exchange %s, out of the backend's topology", q.Name, val)
}

func expiresText(q CheckedQueue, val string) string {
	if q.Role == RoleHold {
		return fmt.Sprintf("deletes %s %s ms after its last use, no later than the %d ms wait it owes: a waiting message is lost with it", q.Name, val, q.TTLMs)
	}
	return fmt.Sprintf("deletes %s, whatever it holds, after %s ms without a consumer: its messages are lost", q.Name, val)
}

func ttlText(q CheckedQueue, val string) string {
	switch q.Role {
	case RoleHold:
		return fmt.Sprintf("ends waits in %s after %s ms instead of %d ms: retries and deferrals fire early", q.Name, val, q.TTLMs)
	case RoleMain:
		return fmt.Sprintf("expires messages on %s after %s ms, before a worker takes them: they are lost", q.Name, val)
	}
	return fmt.Sprintf("expires messages on %s after %s ms: they are lost before anyone consumes or moves them", q.Name, val)
}

func lengthText(q CheckedQueue, k, val, overflow string) string {
	limit := val + " messages"
	if val == "1" {
		limit = "1 message"
	}
	if k == PolicyMaxLengthBytes {
		limit = val + " bytes of message bodies"
	}
	if overflow == OverflowRejectPublish || overflow == OverflowRejectPublishDLX {
		refused := map[Role]string{RoleMain: "the application's publishes", RoleDead: "dead letters", RoleHold: "deferrals", RoleHolding: "the messages moved aside"}[q.Role]
		return fmt.Sprintf("limits %s to %s and then refuses %s (%s)", q.Name, limit, refused, overflow)
	}
	if q.Role == RoleHold {
		return fmt.Sprintf("limits %s to %s and then sends the oldest waits back to their queue early (drop-head)", q.Name, limit)
	}
	return fmt.Sprintf("limits %s to %s and then drops the oldest messages: they are lost (drop-head)", q.Name, limit)
}

// MoveLosses returns the effects on dest (q for a redrive, {q}.redeclaring for a move aside) that
// would expire, drop or delete what a move carries there: every effect, tied ones included, of
// expires, message-ttl, max-length or max-length-bytes (on q, a message-ttl only where it is
// lower than q's own: a loss the policy alone causes). A dead-letter exchange is left out: alone it
// neither expires nor drops. An unevaluable pattern is an error, so that no move goes ahead on a
// guess.
func MoveLosses(dest CheckedQueue, applied Applied) ([]Effect, error) {
	if len(applied.Unevaluable) > 0 {
		errs := make([]error, len(applied.Unevaluable))
		for i := range applied.Unevaluable {
			errs[i] = &applied.Unevaluable[i]
		}
		return nil, errors.Join(errs...)
	}
	var losses []Effect
	for _, e := range PolicyEffects(dest, applied) {
		if slices.Contains(minKeys, e.Key) {
			losses = append(losses, e)
		}
	}
	return losses, nil
}
