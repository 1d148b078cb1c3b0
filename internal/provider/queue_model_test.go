package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// queueModel must have exactly the attributes of the queuey_queue schema:
// the framework's Get and Set refuse a model with an attribute too many or
// too few, at plan time. This finds it without Terraform, for known, null
// and unknown values, both ways.
func TestQueueModelMatchesTheSchema(t *testing.T) {
	var sr resource.SchemaResponse
	NewQueueResource().Schema(context.Background(), resource.SchemaRequest{}, &sr)
	if sr.Diagnostics.HasError() {
		t.Fatal(sr.Diagnostics)
	}
	models := map[string]queueModel{
		"known": {
			ID: types.StringValue("%2F/orders"), Name: types.StringValue("orders"), Vhost: types.StringValue("/"),
			MessageTTL: types.StringValue("24h"), MaxPriority: types.Int64Value(255), ForceDestroy: types.BoolValue(true),
			DeadQueue: types.StringValue("orders.dead"), ArgumentsJSON: jsontypes.NewNormalizedValue(`{"x-max-priority":255}`),
			HoldQueuePrefix: types.StringValue("orders.deferred."), HoldQueuePattern: types.StringValue(`^orders\.deferred\.[0-9]+$`),
			QueuesPattern: types.StringValue("q"), WritePattern: types.StringValue("w"),
		},
		"null": {
			ID: types.StringNull(), Name: types.StringValue("q"), Vhost: types.StringNull(), MessageTTL: types.StringNull(),
			MaxPriority: types.Int64Null(), ForceDestroy: types.BoolNull(), DeadQueue: types.StringNull(),
			ArgumentsJSON: jsontypes.NewNormalizedNull(), HoldQueuePrefix: types.StringNull(), HoldQueuePattern: types.StringNull(),
			QueuesPattern: types.StringNull(), WritePattern: types.StringNull(),
		},
		"unknown": {
			ID: types.StringUnknown(), Name: types.StringUnknown(), Vhost: types.StringUnknown(), MessageTTL: types.StringUnknown(),
			MaxPriority: types.Int64Unknown(), ForceDestroy: types.BoolUnknown(), DeadQueue: types.StringUnknown(),
			ArgumentsJSON: jsontypes.NewNormalizedUnknown(), HoldQueuePrefix: types.StringUnknown(), HoldQueuePattern: types.StringUnknown(),
			QueuesPattern: types.StringUnknown(), WritePattern: types.StringUnknown(),
		},
	}
	for name, m := range models {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := tfsdk.State{Schema: sr.Schema}
			if d := st.Set(ctx, &m); d.HasError() {
				t.Fatalf("the schema does not take the model: %v", d)
			}
			var back queueModel
			if d := st.Get(ctx, &back); d.HasError() {
				t.Fatalf("the model does not take the schema's value: %v", d)
			}
			if back != m {
				t.Errorf("read back %+v, want %+v", back, m)
			}
		})
	}
}
