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

// suffixesFor reads back a state's suffixes, else fallback, the provider's (after an import).
func suffixesFor(m queueModel, fallback topology.Suffixes) topology.Suffixes {
	return topology.SuffixesOf(m.Name.ValueString(), m.DeadQueue.ValueString(), m.HoldQueuePrefix.ValueString(), fallback)
}

// existingOf is what the broker reports of a queue, in topology's terms.
func existingOf(q broker.Queue) topology.Existing {
	return topology.Existing{Type: q.Type, Durable: q.Durable, AutoDelete: q.AutoDelete, Exclusive: q.Exclusive, Arguments: q.Arguments}
}

// observedState is the state of a queue as the broker holds it: prior (or just name and vhost,
// after an import) updated with the broker's TTL and priority, the computed names, and
// arguments_json: the computed table, or what the broker holds when q differs (each differing flag
// included), so the next plan shows drift. A missing q.dead leaves dead_queue null, so the update
// declares it again.
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
		// Out of band, or beyond what this resource can express: drift all the same.
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

func intArg(args map[string]any, key string) (int64, bool) {
	v, ok := args[key]
	if !ok {
		return 0, false
	}
	return topology.AsInt(v)
}

func sameDurationMs(v types.String, ms int64) bool {
	if v.IsNull() || v.IsUnknown() {
		return false
	}
	d, err := time.ParseDuration(v.ValueString())
	return err == nil && d == time.Duration(ms)*time.Millisecond
}

// queueModel is the resource's state and plan.
type queueModel struct {
	ID               types.String         `tfsdk:"id"`
	Name             types.String         `tfsdk:"name"`
	Vhost            types.String         `tfsdk:"vhost"`
	MessageTTL       types.String         `tfsdk:"message_ttl"`
	MaxPriority      types.Int64          `tfsdk:"max_priority"`
	ForceDestroy     types.Bool           `tfsdk:"force_destroy"`
	KeepMessages     types.Bool           `tfsdk:"keep_messages_on_change"`
	Redeclaring      types.Int64          `tfsdk:"redeclaring_messages"`
	DeadQueue        types.String         `tfsdk:"dead_queue"`
	ArgumentsJSON    jsontypes.Normalized `tfsdk:"arguments_json"`
	HoldQueuePrefix  types.String         `tfsdk:"hold_queue_prefix"`
	HoldQueuePattern types.String         `tfsdk:"hold_queue_pattern"`
	QueuesPattern    types.String         `tfsdk:"queues_pattern"`
	WritePattern     types.String         `tfsdk:"write_pattern"`
}
