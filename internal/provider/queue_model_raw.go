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

// decode sets *dst from v: unknown, null, or the known value read as a T and
// converted by known.
func decode[T, V any](dst *V, v tftypes.Value, unknown, null V, known func(T) (V, error)) error {
	switch {
	case !v.IsKnown():
		*dst = unknown
	case v.IsNull():
		*dst = null
	default:
		var x T
		if err := v.As(&x); err != nil {
			return err
		}
		k, err := known(x)
		if err != nil {
			return err
		}
		*dst = k
	}
	return nil
}

func stringInto(dst *types.String) func(tftypes.Value) error {
	return func(v tftypes.Value) error {
		return decode(dst, v, types.StringUnknown(), types.StringNull(), func(s string) (types.String, error) {
			return types.StringValue(s), nil
		})
	}
}

func jsonInto(dst *jsontypes.Normalized) func(tftypes.Value) error {
	return func(v tftypes.Value) error {
		return decode(dst, v, jsontypes.NewNormalizedUnknown(), jsontypes.NewNormalizedNull(), func(s string) (jsontypes.Normalized, error) {
			return jsontypes.NewNormalizedValue(s), nil
		})
	}
}

func int64Into(dst *types.Int64) func(tftypes.Value) error {
	return func(v tftypes.Value) error {
		return decode(dst, v, types.Int64Unknown(), types.Int64Null(), func(f big.Float) (types.Int64, error) {
			i, acc := f.Int64()
			if acc != big.Exact {
				return types.Int64{}, fmt.Errorf("%s is not a whole number that fits 64 bits", f.String())
			}
			return types.Int64Value(i), nil
		})
	}
}

func boolInto(dst *types.Bool) func(tftypes.Value) error {
	return func(v tftypes.Value) error {
		return decode(dst, v, types.BoolUnknown(), types.BoolNull(), func(b bool) (types.Bool, error) {
			return types.BoolValue(b), nil
		})
	}
}
