package provider

import (
	"errors"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// wantedQueues is what a queuey_queue declares.
type wantedQueues struct {
	main topology.Queue
	dead topology.Queue
}

// wanted computes the queues of a plan with the provider's suffixes.
func (r *queueResource) wanted(m queueModel) (wantedQueues, diag.Diagnostics) {
	return r.wantedWith(m, r.data.suffixes)
}

func (r *queueResource) wantedWith(m queueModel, s topology.Suffixes) (wantedQueues, diag.Diagnostics) {
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
		if invalid := (*topology.InvalidError)(nil); errors.As(err, &invalid) {
			at = invalid.Attribute
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
