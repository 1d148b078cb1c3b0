package provider

import (
	"errors"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// wantedQueues is what a queuey_queue declares.
type wantedQueues struct {
	main topology.Queue
	dead topology.Queue
}

// wanted computes the queues of a plan with the provider's suffixes.
func (r *queueResource) wanted(m queueModel) (wantedQueues, diag.Diagnostics) {
	return wantedWith(m, r.data.suffixes)
}

// wantedWith computes the queues of a plan or state with the given suffixes.
func wantedWith(m queueModel, s topology.Suffixes) (wantedQueues, diag.Diagnostics) {
	var diags diag.Diagnostics
	name := m.Name.ValueString()
	var ttl, prio *int64
	if !m.MessageTTL.IsNull() && !m.MessageTTL.IsUnknown() {
		d, err := parseDuration("message_ttl", m.MessageTTL.ValueString(), messageTTLRange())
		if err != nil {
			diags.AddAttributeError(path.Root("message_ttl"), "Invalid Duration", err.Error())
			return wantedQueues{}, diags
		}
		ms, err := topology.MessageTTLMs(d)
		if err != nil {
			diags.AddAttributeError(path.Root("message_ttl"), "Invalid Message TTL", err.Error())
			return wantedQueues{}, diags
		}
		ttl = &ms
	}
	if !m.MaxPriority.IsNull() && !m.MaxPriority.IsUnknown() {
		p := m.MaxPriority.ValueInt64()
		prio = &p
	}
	args, err := topology.QueueArgs(ttl, prio)
	if err != nil {
		at := "max_priority"
		if se := (*topology.SettingError)(nil); errors.As(err, &se) {
			at = se.Setting
		}
		diags.AddAttributeError(path.Root(at), "Invalid Queue Arguments", err.Error())
		return wantedQueues{}, diags
	}
	return wantedQueues{
		main: topology.Queue{Name: name, Args: args},
		dead: topology.Queue{Name: topology.DeadQueueName(name, s), Args: topology.DeadQueueArgs()},
	}, diags
}

// suffixesFor returns the suffixes a queue in state was created with (read
// back from its dead_queue and hold_queue_prefix), falling back to the
// provider's for what state does not tell (after an import).
func (r *queueResource) suffixesFor(m queueModel) topology.Suffixes {
	return topology.SuffixesOf(m.Name.ValueString(), m.DeadQueue.ValueString(), m.HoldQueuePrefix.ValueString(), r.data.suffixes)
}

// observedState is the state of a queue as the broker holds it: the prior
// state (or one with just name and vhost, after an import or in a listing)
// updated with the broker's x-message-ttl and x-max-priority, the computed
// names, and arguments_json. That is the computed table unless the broker's
// q differs from what the backend declares: then it is what the broker holds
// (with each flag that differs, e.g. "auto_delete":true), so that the next
// plan shows the difference and replaces the queues. A dead-letter queue that
// is missing leaves dead_queue null: the plan puts the name back and the
// update declares it again.
func observedState(prior queueModel, main broker.Queue, deadOK bool, s topology.Suffixes) queueModel {
	m := prior
	name, vhost := m.Name.ValueString(), m.Vhost.ValueString()
	ttlMs, ttlOK := intArg(main.Arguments, topology.ArgMessageTTL)
	switch {
	case !ttlOK:
		m.MessageTTL = types.StringNull()
	case !sameDurationMs(m.MessageTTL, ttlMs):
		// Keep the prior spelling of a duration equal by value.
		m.MessageTTL = types.StringValue(shortDuration(time.Duration(ttlMs) * time.Millisecond))
	}
	m.MaxPriority = types.Int64Null()
	if p, ok := intArg(main.Arguments, topology.ArgMaxPriority); ok {
		m.MaxPriority = types.Int64Value(p)
	}
	got := existingOf(main)
	want, diags := wantedWith(m, s)
	if diags.HasError() || len(topology.Mismatches(got, want.main.Args)) > 0 {
		// Out of band, or beyond what this resource can express (a TTL out
		// of range, a priority of 0): drift all the same.
		m.ArgumentsJSON = jsontypes.NewNormalizedValue(topology.ObservedJSON(got))
	} else {
		m.ArgumentsJSON = jsontypes.NewNormalizedValue(want.main.Args.JSON())
	}
	m.DeadQueue = types.StringNull()
	if deadOK {
		m.DeadQueue = types.StringValue(topology.DeadQueueName(name, s))
	}
	setDerived(&m, name, vhost, s)
	if m.ForceDestroy.IsNull() || m.ForceDestroy.IsUnknown() {
		m.ForceDestroy = types.BoolValue(false)
	}
	if m.KeepMessages.IsNull() || m.KeepMessages.IsUnknown() {
		m.KeepMessages = types.BoolValue(false)
	}
	return m
}

// setDerived fills in the computed names and patterns.
func setDerived(m *queueModel, name, vhost string, s topology.Suffixes) {
	m.ID = types.StringValue(queueID(vhost, name))
	m.HoldQueuePrefix = types.StringValue(topology.HoldQueuePrefix(name, s))
	m.HoldQueuePattern = types.StringValue(topology.HoldQueuePattern(name, s))
	m.QueuesPattern = types.StringValue(topology.QueuesPattern(name, s))
	m.WritePattern = types.StringValue(topology.WritePattern(name, s))
}

// intArg returns an integer argument of a queue as reported by the broker.
func intArg(args map[string]any, key string) (int64, bool) {
	v, ok := args[key]
	if !ok {
		return 0, false
	}
	return topology.AsInt(v)
}

// sameDurationMs reports whether a duration value equals ms milliseconds.
func sameDurationMs(v types.String, ms int64) bool {
	if v.IsNull() || v.IsUnknown() {
		return false
	}
	d, err := time.ParseDuration(v.ValueString())
	return err == nil && d == time.Duration(ms)*time.Millisecond
}
