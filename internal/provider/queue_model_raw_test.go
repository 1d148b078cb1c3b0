package provider

import (
	"context"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func queueSchemaState(t *testing.T) tfsdk.State {
	t.Helper()
	var resp resource.SchemaResponse
	NewQueueResource().Schema(context.Background(), resource.SchemaRequest{}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	return tfsdk.State{Schema: resp.Schema}
}

// The hand conversion must cover exactly the attributes of the schema: a new
// attribute without a line in queueModel.attributes fails here.
func TestQueueModelAttributesMatchTheSchema(t *testing.T) {
	st := queueSchemaState(t)
	var inSchema, inModel []string
	for name := range st.Schema.GetAttributes() {
		inSchema = append(inSchema, name)
	}
	var m queueModel
	for _, a := range m.attributes() {
		inModel = append(inModel, a.name)
	}
	sort.Strings(inSchema)
	sort.Strings(inModel)
	if len(inSchema) != len(inModel) {
		t.Fatalf("schema attributes %v, hand-converted attributes %v", inSchema, inModel)
	}
	for i := range inSchema {
		if inSchema[i] != inModel[i] {
			t.Fatalf("schema attributes %v, hand-converted attributes %v", inSchema, inModel)
		}
	}
}

// The hand conversion gives the framework's own answer, both ways, for
// known, null and unknown values.
func TestQueueModelConversionMatchesTheFramework(t *testing.T) {
	ctx := context.Background()
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
			framework := queueSchemaState(t)
			if d := framework.Set(ctx, &m); d.HasError() {
				t.Fatal(d)
			}
			ours := queueSchemaState(t)
			if d := setModel(ctx, &ours.Raw, ours.Schema.Type, &m); d.HasError() {
				t.Fatal(d)
			}
			if !ours.Raw.Equal(framework.Raw) {
				t.Fatalf("written by hand:\n%s\nby the framework:\n%s", ours.Raw, framework.Raw)
			}
			var byHand, byFramework queueModel
			if d := modelFromRaw(framework.Raw, &byHand); d.HasError() {
				t.Fatal(d)
			}
			if d := framework.Get(ctx, &byFramework); d.HasError() {
				t.Fatal(d)
			}
			for i, a := range byHand.attributes() {
				if b := byFramework.attributes()[i]; !a.get.Equal(b.get) {
					t.Errorf("%s read by hand %s, by the framework %s", a.name, a.get, b.get)
				}
			}
		})
	}
}

func TestQueueModelFromRawRefusesAMissingAttribute(t *testing.T) {
	raw := tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"name": tftypes.String}},
		map[string]tftypes.Value{"name": tftypes.NewValue(tftypes.String, "q")})
	var m queueModel
	if d := modelFromRaw(raw, &m); !d.HasError() {
		t.Fatal("a value without the other attributes was accepted")
	}
}
