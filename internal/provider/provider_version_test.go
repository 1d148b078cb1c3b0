package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
)

// The provider's logs name the version it was built as (make release-check
// checks the same line in a release build's TF_LOG output).
func TestProviderConfigure_LogsVersion(t *testing.T) {
	clearBrokerEnv(t)
	for _, version := range []string{"0.3.0", "0.3.1-snapshot", "dev"} {
		t.Run(version, func(t *testing.T) {
			var logs bytes.Buffer
			ctx := tflogtest.RootLogger(context.Background(), &logs)
			p := New(version)()
			var s provider.SchemaResponse
			p.Schema(ctx, provider.SchemaRequest{}, &s)
			typ, ok := s.Schema.Type().TerraformType(ctx).(tftypes.Object)
			if !ok {
				t.Fatalf("the provider schema's type is %T, want an object", s.Schema.Type().TerraformType(ctx))
			}
			attrs := map[string]tftypes.Value{}
			for name, at := range typ.AttributeTypes {
				attrs[name] = tftypes.NewValue(at, nil)
			}
			var resp provider.ConfigureResponse
			p.Configure(ctx, provider.ConfigureRequest{Config: tfsdk.Config{Schema: s.Schema, Raw: tftypes.NewValue(typ, attrs)}}, &resp)
			if resp.Diagnostics.HasError() {
				t.Fatalf("Configure of an empty provider block failed: %v", resp.Diagnostics)
			}
			entries, err := tflogtest.MultilineJSONDecode(&logs)
			if err != nil {
				t.Fatalf("decoding the logs: %v", err)
			}
			for _, e := range entries {
				if e["@message"] == "configuring the queuey provider" && e["version"] == version {
					return
				}
			}
			got, _ := json.Marshal(entries)
			t.Fatalf("no log entry names version %q; the logs: %s", version, got)
		})
	}
}
