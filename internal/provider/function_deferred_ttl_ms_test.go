package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

func TestDeferredTTLMsFunction(t *testing.T) {
	tests := []struct {
		output, delay, granularity string
		want                       int64
	}{
		{"zero", "0s", "1s", 1000},
		{"fraction", "29.2s", "1s", 30000},
		{"exact", "30s", "1s", 30000},
		{"just_past", "30.001s", "1s", 31000},
		{"five_s_fraction", "29.2s", "5s", 30000},
		{"five_s_past", "30.5s", "5s", 35000},
		{"granularity_by_value", "30.5s", "5000ms", 35000},
		{"zero_at_1m", "0s", "1m", 60000},
		{"longest_at_1s", "2147483s", "1s", 2147483000},
		{"longest_at_1ms", "2147483647ms", "1ms", 2147483647},
	}
	var config strings.Builder
	var checks []statecheck.StateCheck
	for _, tt := range tests {
		config.WriteString("output \"" + tt.output + "\" {\n  value = provider::queuey::deferred_ttl_ms(\"" + tt.delay + "\", \"" + tt.granularity + "\")\n}\n")
		checks = append(checks, statecheck.ExpectKnownOutputValue(tt.output, knownvalue.Int64Exact(tt.want)))
	}
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps:                    []resource.TestStep{{Config: config.String(), ConfigStateChecks: checks}},
	}, featureFunctions)
}

func TestDeferredTTLMsFunction_Errors(t *testing.T) {
	tests := []configError{
		{`deferred_ttl_ms("2147484s", "1s")`, []string{`Invalid value for "delay" parameter`, "at granularity 1s the longest delay accepted is 2147483s"}},
		{`deferred_ttl_ms("2147483648ms", "1ms")`, []string{`Invalid value for "delay" parameter`, "at granularity 1ms the longest delay accepted is 2147483647ms"}},
		{`deferred_ttl_ms("30 seconds", "1s")`, []string{`Invalid value for "delay" parameter`, "delay must be a Go duration string", "from 0s to 2147483s"}},
		{`deferred_ttl_ms("-1ms", "1s")`, []string{`Invalid value for "delay" parameter`, "delay must not be negative", "from 0s to 2147483s"}},
		{`deferred_ttl_ms("1s", "0s")`, []string{`Invalid value for "granularity" parameter`, "granularity must be a positive whole number of milliseconds, from 1ms to 2147483647ms"}},
		{`deferred_ttl_ms("1s", "1.5ms")`, []string{`Invalid value for "granularity" parameter`, "granularity must be a whole number of milliseconds, from 1ms to 2147483647ms"}},
		{`deferred_ttl_ms("1s", "2147483648ms")`, []string{`Invalid value for "granularity" parameter`, "granularity must be at most 2147483647ms"}},
		{`deferred_ttl_ms("1s", "")`, []string{`Invalid value for "granularity" parameter`, "granularity must be a Go duration string", "from 1ms to 2147483647ms"}},
	}
	testErrors(t, functionOutput, tests, featureFunctions)
}

func TestDeferredTTLMsFunction_Example(t *testing.T) {
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: readRepoFile(t, "examples/functions/deferred_ttl_ms/function.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("ttl_at_1s", knownvalue.Int64Exact(30000)),
				statecheck.ExpectKnownOutputValue("ttl_at_5s", knownvalue.Int64Exact(35000)),
				statecheck.ExpectKnownOutputValue("ttl_of_zero", knownvalue.Int64Exact(1000)),
			},
		}},
	}, featureFunctions)
}
