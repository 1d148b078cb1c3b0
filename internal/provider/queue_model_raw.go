package provider

import (
	"context"
	"fmt"
	"math/big"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The model of queuey_queue is converted to and from Terraform's values by
// hand: the framework's Get and Set go through reflection, which took a fifth
// of the provider's CPU in a plan of many queues (make bench with
// BENCH_PROFILE=1). queueModelAttributes is the one list of the attributes;
// a unit test fails when the schema and this list differ.

// modelAttribute is one attribute of the model: its name, its value, and how
// to set it from a Terraform value.
type modelAttribute struct {
	name string
	get  attr.Value
	set  func(tftypes.Value) error
}

func (m *queueModel) attributes() []modelAttribute {
	return []modelAttribute{
		{"id", m.ID, stringInto(&m.ID)},
		{"name", m.Name, stringInto(&m.Name)},
		{"vhost", m.Vhost, stringInto(&m.Vhost)},
		{"message_ttl", m.MessageTTL, stringInto(&m.MessageTTL)},
		{"max_priority", m.MaxPriority, int64Into(&m.MaxPriority)},
		{"force_destroy", m.ForceDestroy, boolInto(&m.ForceDestroy)},
		{"dead_queue", m.DeadQueue, stringInto(&m.DeadQueue)},
		{"arguments_json", m.ArgumentsJSON, jsonInto(&m.ArgumentsJSON)},
		{"hold_queue_prefix", m.HoldQueuePrefix, stringInto(&m.HoldQueuePrefix)},
		{"hold_queue_pattern", m.HoldQueuePattern, stringInto(&m.HoldQueuePattern)},
		{"queues_pattern", m.QueuesPattern, stringInto(&m.QueuesPattern)},
		{"write_pattern", m.WritePattern, stringInto(&m.WritePattern)},
	}
}

// modelFromRaw reads a plan, state or configuration of queuey_queue.
func modelFromRaw(raw tftypes.Value, m *queueModel) diag.Diagnostics {
	var diags diag.Diagnostics
	var obj map[string]tftypes.Value
	if err := raw.As(&obj); err != nil {
		diags.AddError("Unexpected Terraform Value", fmt.Sprintf("Reading queuey_queue: %v. This is a bug in the provider; please report it.", err))
		return diags
	}
	for _, a := range m.attributes() {
		v, ok := obj[a.name]
		if !ok {
			diags.AddError("Unexpected Terraform Value", fmt.Sprintf("Reading queuey_queue: no attribute %q. This is a bug in the provider; please report it.", a.name))
			return diags
		}
		if err := a.set(v); err != nil {
			diags.AddError("Unexpected Terraform Value", fmt.Sprintf("Reading attribute %q of queuey_queue: %v. This is a bug in the provider; please report it.", a.name, err))
			return diags
		}
	}
	return diags
}

// queueObjectType is the Terraform type of queuey_queue, taken once from
// its schema.
var queueObjectType struct {
	once sync.Once
	typ  tftypes.Type
}

// setModel writes m into a plan or state (dst is its Raw, schemaType its
// Schema.Type, used the first time only).
func setModel(ctx context.Context, dst *tftypes.Value, schemaType func() attr.Type, m *queueModel) diag.Diagnostics {
	var diags diag.Diagnostics
	queueObjectType.once.Do(func() { queueObjectType.typ = schemaType().TerraformType(ctx) })
	attrs := m.attributes()
	vals := make(map[string]tftypes.Value, len(attrs))
	for _, a := range attrs {
		v, err := a.get.ToTerraformValue(ctx)
		if err != nil {
			diags.AddError("Unexpected Terraform Value", fmt.Sprintf("Writing attribute %q of queuey_queue: %v. This is a bug in the provider; please report it.", a.name, err))
			return diags
		}
		vals[a.name] = v
	}
	*dst = tftypes.NewValue(queueObjectType.typ, vals)
	return diags
}

func stringInto(dst *types.String) func(tftypes.Value) error {
	return func(v tftypes.Value) error {
		switch {
		case !v.IsKnown():
			*dst = types.StringUnknown()
		case v.IsNull():
			*dst = types.StringNull()
		default:
			var s string
			if err := v.As(&s); err != nil {
				return err
			}
			*dst = types.StringValue(s)
		}
		return nil
	}
}

func jsonInto(dst *jsontypes.Normalized) func(tftypes.Value) error {
	return func(v tftypes.Value) error {
		var s types.String
		if err := stringInto(&s)(v); err != nil {
			return err
		}
		*dst = jsontypes.Normalized{StringValue: s}
		return nil
	}
}

func int64Into(dst *types.Int64) func(tftypes.Value) error {
	return func(v tftypes.Value) error {
		switch {
		case !v.IsKnown():
			*dst = types.Int64Unknown()
		case v.IsNull():
			*dst = types.Int64Null()
		default:
			var f big.Float
			if err := v.As(&f); err != nil {
				return err
			}
			i, acc := f.Int64()
			if acc != big.Exact {
				return fmt.Errorf("%s is not a whole number that fits 64 bits", f.String())
			}
			*dst = types.Int64Value(i)
		}
		return nil
	}
}

func boolInto(dst *types.Bool) func(tftypes.Value) error {
	return func(v tftypes.Value) error {
		switch {
		case !v.IsKnown():
			*dst = types.BoolUnknown()
		case v.IsNull():
			*dst = types.BoolNull()
		default:
			var b bool
			if err := v.As(&b); err != nil {
				return err
			}
			*dst = types.BoolValue(b)
		}
		return nil
	}
}
