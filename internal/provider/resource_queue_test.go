package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// fakeProviderConfig is a queuey_queue "orders" with the lines of body, its provider pointed at
// the fake broker and given each of settings too.
func fakeProviderConfig(s *brokertest.Server, body string, settings ...string) string {
	return providerQueue(fmt.Sprintf("  endpoint = %q\n  username = \"u\"\n  password = \"p\"\n  retry_budget = \"0s\"", s.URL)+
		strings.Join(append([]string{""}, settings...), "\n  "), "orders", body)
}

// A queue that exists with other settings is refused at create, each
// difference named with both values, names sorted, and nothing declared.
func TestQueue_adoptRefusedNamesEachDifference(t *testing.T) {
	s := brokertest.New(t)
	s.PutQueue("/", brokertest.Queue{Name: "orders", Durable: false, Messages: brokertest.Count(0),
		Arguments: map[string]any{"x-message-ttl": 1000, "x-max-length": 5}})
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: fakeProviderConfig(s, `  message_ttl = "2s"`),
			ExpectError: regexp.MustCompile(`(?s)Queue\s+Exists\s+With\s+Different\s+Settings.*durable:\s+broker\s+has\s+false,\s+wanted\s+true.*` +
				`x-max-length:\s+broker\s+has\s+5,\s+wanted\s+absent.*x-message-ttl:\s+broker\s+has\s+1000,\s+wanted\s+2000.*Nothing\s+was\s+changed`),
		}},
	})
	if d := s.RequestsMatching("PUT"); len(d) > 0 {
		t.Errorf("a refused create declared %q", d)
	}
}

// A vhost that makes quorum queues by default is refused before anything is
// declared; a vhost that does not exist is named as missing.
func TestQueue_vhostChecked(t *testing.T) {
	s := brokertest.New(t)
	s.AddVhost("quorum-default", "quorum")
	for vhost, want := range map[string]string{
		"quorum-default": `(?s)vhost\s+"quorum-default"\s+makes\s+quorum\s+queues\s+by\s+default`,
		"missing":        `(?s)vhost\s+"missing"\s+does\s+not\s+exist`,
	} {
		unitTest(t, resource.TestCase{
			ProtoV6ProviderFactories: testProviderFactories,
			Steps: []resource.TestStep{{
				Config:      fakeProviderConfig(s, fmt.Sprintf("  vhost = %q", vhost)),
				ExpectError: regexp.MustCompile(want),
			}},
		})
	}
	if d := s.RequestsMatching("PUT"); len(d) > 0 {
		t.Errorf("declared %q in a vhost that was refused", d)
	}
}

// queueModel must have exactly the attributes of the queuey_queue schema:
// the framework's Get and Set refuse a model with an attribute too many or
// too few, at plan time. This finds it without Terraform, for known, null
// and unknown values, both ways.
func TestQueueModelMatchesTheSchema(t *testing.T) {
	var sr fwresource.SchemaResponse
	NewQueueResource().Schema(context.Background(), fwresource.SchemaRequest{}, &sr)
	if sr.Diagnostics.HasError() {
		t.Fatal(sr.Diagnostics)
	}
	models := map[string]queueModel{
		"known": {
			ID: types.StringValue("%2F/orders"), Name: types.StringValue("orders"), Vhost: types.StringValue("/"),
			MessageTTL: types.StringValue("24h"), MaxPriority: types.Int64Value(255), ForceDestroy: types.BoolValue(true),
			KeepMessages: types.BoolValue(true), Redeclaring: types.Int64Value(1204),
			DeadQueue: types.StringValue("orders.dead"), ArgumentsJSON: jsontypes.NewNormalizedValue(`{"x-max-priority":255}`),
			HoldQueuePrefix: types.StringValue("orders.deferred."), HoldQueuePattern: types.StringValue(`^orders\.deferred\.[0-9]+$`),
			QueuesPattern: types.StringValue("q"), WritePattern: types.StringValue("w"),
		},
		"null": {
			ID: types.StringNull(), Name: types.StringValue("q"), Vhost: types.StringNull(), MessageTTL: types.StringNull(),
			MaxPriority: types.Int64Null(), ForceDestroy: types.BoolNull(), DeadQueue: types.StringNull(),
			KeepMessages: types.BoolNull(), Redeclaring: types.Int64Null(),
			ArgumentsJSON: jsontypes.NewNormalizedNull(), HoldQueuePrefix: types.StringNull(), HoldQueuePattern: types.StringNull(),
			QueuesPattern: types.StringNull(), WritePattern: types.StringNull(),
		},
		"unknown": {
			ID: types.StringUnknown(), Name: types.StringUnknown(), Vhost: types.StringUnknown(), MessageTTL: types.StringUnknown(),
			MaxPriority: types.Int64Unknown(), ForceDestroy: types.BoolUnknown(), DeadQueue: types.StringUnknown(),
			KeepMessages: types.BoolUnknown(), Redeclaring: types.Int64Unknown(),
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

// Bad input to queuey_queue fails at plan time, before any broker is
// contacted: these run without TF_ACC and without an endpoint.
func TestQueue_planTimeValidation(t *testing.T) {
	t.Setenv(EnvEndpoint, "")
	tests := []struct {
		name, provider, body string
		want                 string
	}{
		{"name too long", "", `name = "` + strings.Repeat("a", 236) + `"`, `(?s)name.*236\s+bytes.*1\s+to\s+235\s+bytes`},
		{"name too long for custom suffixes", `dead_suffix = "` + strings.Repeat("d", 40) + `"`, `name = "` + strings.Repeat("a", 216) + `"`, `(?s)name.*1\s+to\s+215\s+bytes`},
		{"reserved name", "", `name = "amq.orders"`, `(?s)name.*starts\s+with\s+"amq\.".*1\s+to\s+235\s+bytes`},
		{"empty name", "", `name = ""`, `(?s)name.*must\s+not\s+be\s+empty.*1\s+to\s+235\s+bytes`},
		{"priority zero", "", "name = \"q\"\nmax_priority = 0", `(?s)max_priority.*between\s+1\s+and\s+255`},
		{"priority 256", "", "name = \"q\"\nmax_priority = 256", `(?s)max_priority.*between\s+1\s+and\s+255`},
		{"sub-millisecond ttl", "", "name = \"q\"\nmessage_ttl = \"1500us\"", `(?s)message_ttl.*whole\s+number\s+of\s+milliseconds`},
		{"ttl too long", "", "name = \"q\"\nmessage_ttl = \"4294967296ms\"", `(?s)message_ttl.*4294967295ms`},
		{"negative ttl", "", "name = \"q\"\nmessage_ttl = \"-1s\"", `(?s)message_ttl.*0\s+to\s+4294967295ms`},
		{"malformed ttl", "", "name = \"q\"\nmessage_ttl = \"5 seconds\"", `(?s)message_ttl.*0ms\s+to\s+4294967295ms`},
		{"empty vhost", "", "name = \"q\"\nvhost = \"\"", `(?s)Empty\s+Vhost.*vhost\s+must\s+name\s+a\s+vhost`},
		{"empty provider vhost", `vhost = ""`, `name = "q"`, `(?s)Empty\s+Vhost.*vhost\s+must\s+name\s+a\s+vhost`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config:      "provider \"queuey\" {\n" + tt.provider + "\n}\nresource \"queuey_queue\" \"q\" {\n" + tt.body + "\n}\n",
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tt.want),
				}},
			})
		})
	}
}
