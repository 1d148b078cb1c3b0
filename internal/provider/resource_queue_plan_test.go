package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A duration equal by value to the prior state's keeps the state's spelling
// (no change planned); any other configured value is planned as written, and
// an unset one stays null.
func TestDurationByValue(t *testing.T) {
	t.Parallel()
	str := func(s string) types.String { return types.StringValue(s) }
	for _, tc := range []struct {
		name          string
		config, state types.String
		noState       bool
		want          types.String
	}{
		{name: "equal by value", config: str("5000ms"), state: str("5s"), want: str("5s")},
		{name: "different", config: str("6s"), state: str("5s"), want: str("6s")},
		{name: "unset", config: types.StringNull(), state: str("5s"), want: types.StringNull()},
		{name: "unknown", config: types.StringUnknown(), state: str("5s"), want: types.StringUnknown()},
		{name: "create", config: str("5000ms"), state: types.StringNull(), noState: true, want: str("5000ms")},
		{name: "malformed state", config: str("5s"), state: str("five"), want: str("5s")},
	} {
		req := planmodifier.StringRequest{ConfigValue: tc.config, StateValue: tc.state, PlanValue: tc.config,
			State: tfsdk.State{Raw: tftypes.NewValue(tftypes.Object{}, map[string]tftypes.Value{})}}
		if tc.noState {
			req.State.Raw = tftypes.NewValue(tftypes.Object{}, nil)
		}
		if tc.config.IsNull() {
			req.PlanValue = types.StringUnknown() // what Terraform plans for an unset computed value
		}
		resp := planmodifier.StringResponse{PlanValue: req.PlanValue}
		durationByValue{}.PlanModifyString(context.Background(), req, &resp)
		if !resp.PlanValue.Equal(tc.want) {
			t.Errorf("%s: planned %s, want %s", tc.name, resp.PlanValue, tc.want)
		}
	}
}
