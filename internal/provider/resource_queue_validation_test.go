package provider

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

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
			resource.UnitTest(t, resource.TestCase{
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

// A malformed duration names the attribute and the range it accepts, on the
// provider as on the resource.
func TestProvider_malformedDurations(t *testing.T) {
	t.Setenv(EnvEndpoint, "")
	tests := []struct{ name, provider, want string }{
		{"request_timeout not a duration", `request_timeout = "soon"`, `(?s)request_timeout.*from\s+1ms\s+to\s+1h`},
		{"retry_granularity with a space", `retry_granularity = "1 second"`, `(?s)retry_granularity.*from\s+1ms\s+to\s+2147483647ms`},
		{"deferred_granularity not a duration", `deferred_granularity = "x"`, `(?s)deferred_granularity.*from\s+1ms\s+to\s+2147483647ms`},
		{"request_timeout zero", `request_timeout = "0s"`, `(?s)request_timeout.*from\s+1ms\s+to\s+1h`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config:      "provider \"queuey\" {\n" + tt.provider + "\n}\nresource \"queuey_queue\" \"q\" {\n  name = \"q\"\n}\n",
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tt.want),
				}},
			})
		})
	}
}
