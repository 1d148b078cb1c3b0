package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// An import names its queue by the string ID (vhost/name, escaped) or by the
// identity, whose vhost defaults to the provider's; a name the resource
// cannot manage, or a vhost left to a provider vhost not known yet, is an
// error.
func TestImportTarget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var schema resource.IdentitySchemaResponse
	(&queueResource{}).IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &schema)
	identity := func(name string, vhost *string) *tfsdk.ResourceIdentity {
		v := tftypes.NewValue(tftypes.String, nil)
		if vhost != nil {
			v = tftypes.NewValue(tftypes.String, *vhost)
		}
		return &tfsdk.ResourceIdentity{Schema: schema.IdentitySchema, Raw: tftypes.NewValue(
			tftypes.Object{AttributeTypes: map[string]tftypes.Type{"name": tftypes.String, "vhost": tftypes.String}},
			map[string]tftypes.Value{"name": tftypes.NewValue(tftypes.String, name), "vhost": v})}
	}
	jobs := "jobs"
	for _, tc := range []struct {
		name         string
		req          resource.ImportStateRequest
		vhostUnknown bool
		vhost, queue string
		err          string
	}{
		{name: "ID", req: resource.ImportStateRequest{ID: "jobs/orders"}, vhost: "jobs", queue: "orders"},
		{name: "bad ID", req: resource.ImportStateRequest{ID: "orders"}, err: "Invalid Import ID"},
		{name: "identity", req: resource.ImportStateRequest{Identity: identity("orders", &jobs)}, vhost: "jobs", queue: "orders"},
		{name: "identity, provider's vhost", req: resource.ImportStateRequest{Identity: identity("orders", nil)}, vhost: "/", queue: "orders"},
		{name: "identity, bad name", req: resource.ImportStateRequest{Identity: identity("amq.orders", nil)}, err: "Invalid Import Identity"},
		{name: "identity, vhost unknown", req: resource.ImportStateRequest{Identity: identity("orders", nil)}, vhostUnknown: true,
			err: "provider's `vhost` is not known yet"},
	} {
		data := &providerData{vhost: "/", vhostUnknown: tc.vhostUnknown, suffixes: topology.DefaultSuffixes()}
		vhost, queue, diags := importTarget(ctx, tc.req, data)
		switch {
		case tc.err != "" && (!diags.HasError() || !strings.Contains(diags[0].Summary()+diags[0].Detail(), tc.err)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, diags, tc.err)
		case tc.err == "" && (diags.HasError() || vhost != tc.vhost || queue != tc.queue):
			t.Errorf("%s: %q %q %v, want %q %q", tc.name, vhost, queue, diags, tc.vhost, tc.queue)
		}
	}
}
