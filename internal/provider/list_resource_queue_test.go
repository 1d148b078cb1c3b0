package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// listOnFake runs the list resource against the fake broker with a config of
// vhost and name_regex ("" for null) and returns what it streamed.
func listOnFake(t *testing.T, fake *brokertest.Server, vhost, nameRegex string, limit int64) []list.ListResult {
	t.Helper()
	ctx := context.Background()
	data := &providerData{
		suffixes: topology.DefaultSuffixes(), vhost: "/", endpointSet: true,
		brokerConfig: broker.Config{Endpoint: fake.URL, Username: "u", Password: "p"},
	}
	r := &queueListResource{data: data}
	var schemaResp list.ListResourceSchemaResponse
	r.ListResourceConfigSchema(ctx, list.ListResourceSchemaRequest{}, &schemaResp)
	str := func(s string) tftypes.Value {
		if s == "" {
			return tftypes.NewValue(tftypes.String, nil)
		}
		return tftypes.NewValue(tftypes.String, s)
	}
	config := tftypes.NewValue(schemaResp.Schema.Type().TerraformType(ctx), map[string]tftypes.Value{
		"vhost": str(vhost), "name_regex": str(nameRegex),
	})
	var resSchema resource.SchemaResponse
	NewQueueResource().Schema(ctx, resource.SchemaRequest{}, &resSchema)
	var idSchema resource.IdentitySchemaResponse
	(&queueResource{}).IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &idSchema)
	req := list.ListRequest{
		Config: tfsdk.Config{Raw: config, Schema: schemaResp.Schema}, IncludeResource: true, Limit: limit,
		ResourceSchema: resSchema.Schema, ResourceIdentitySchema: idSchema.IdentitySchema,
	}
	var stream list.ListResultsStream
	r.List(ctx, req, &stream)
	var out []list.ListResult
	for res := range stream.Results {
		out = append(out, res)
	}
	return out
}

func TestQueueList_streamsWarningThenQueues(t *testing.T) {
	fake := brokertest.New(t)
	putIdle(fake, "orders.dead", "plain", "plain.dead", "odd.dead", "lonely", "orders.deferred.5000")
	orders := idle("orders")
	orders.Arguments = map[string]any{"x-message-ttl": 5000, "x-max-priority": 10}
	odd := idle("odd")
	odd.Arguments = map[string]any{"x-max-length": 10}
	fake.PutQueue("/", orders)
	fake.PutQueue("/", odd)

	results := listOnFake(t, fake, "", "", 1)
	if len(results) != 2 {
		t.Fatalf("streamed %d results, want the warning and 1 queue (limit 1): %+v", len(results), results)
	}
	warn := results[0].Diagnostics
	if len(warn) != 1 || warn.HasError() || !strings.Contains(warn[0].Detail(), "odd: x-max-length is not declared by the backend") {
		t.Fatalf("first result is not the near-miss warning: %+v", warn)
	}
	got := results[1]
	if got.Diagnostics.HasError() || got.DisplayName != "orders (vhost /)" {
		t.Fatalf("result: %q %v", got.DisplayName, got.Diagnostics)
	}
	var id queueIdentity
	if d := got.Identity.Get(context.Background(), &id); d.HasError() || id.Name.ValueString() != "orders" || id.Vhost.ValueString() != "/" {
		t.Fatalf("identity %+v %v", id, d)
	}
	var m queueModel
	if d := got.Resource.Get(context.Background(), &m); d.HasError() {
		t.Fatal(d)
	}
	if m.MessageTTL.ValueString() != "5s" || m.MaxPriority.ValueInt64() != 10 || m.ID.ValueString() != "%2F/orders" ||
		m.DeadQueue.ValueString() != "orders.dead" || m.ForceDestroy.ValueBool() ||
		m.ArgumentsJSON.ValueString() != `{"x-max-priority":10,"x-message-ttl":5000}` {
		t.Errorf("resource state is not what a read after import gives: %+v", m)
	}
	if n := len(fake.RequestsMatching("GET queues")); n != 1 {
		t.Errorf("the vhost was listed %d times, want once: %q", n, fake.Requests())
	}
}

func TestQueueList_regexAndVhostErrors(t *testing.T) {
	fake := brokertest.New(t)
	putIdle(fake, "a", "a.dead", "b", "b.dead")
	results := listOnFake(t, fake, "/", "^b", 100)
	if len(results) != 1 || results[0].DisplayName != "b (vhost /)" {
		t.Fatalf("name_regex ^b listed %+v", results)
	}
	for _, tc := range []struct{ vhost, regex, want string }{
		{"/", "b(", "name_regex must be a regular expression in RE2 syntax"},
		{"nope", "", `vhost "nope" does not exist`},
	} {
		results := listOnFake(t, fake, tc.vhost, tc.regex, 100)
		if len(results) != 1 || !results[0].Diagnostics.HasError() || !strings.Contains(results[0].Diagnostics[0].Detail(), tc.want) {
			t.Errorf("vhost %q regex %q: %+v, want an error saying %s", tc.vhost, tc.regex, results, tc.want)
		}
	}
	fake.AddVhost("qq", "quorum")
	results = listOnFake(t, fake, "qq", "", 100)
	if len(results) != 1 || !strings.Contains(results[0].Diagnostics[0].Detail(), "makes quorum queues by default") {
		t.Errorf("a quorum vhost: %+v", results)
	}
}
