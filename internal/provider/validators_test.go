package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

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
