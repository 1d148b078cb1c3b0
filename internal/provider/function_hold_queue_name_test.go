package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

func TestHoldQueueNameFunction(t *testing.T) {
	tests := []struct {
		output, call, want string
	}{
		{"zero", `hold_queue_name("orders", "0s")`, "orders.deferred.1000"},
		{"fraction", `hold_queue_name("orders", "29.2s")`, "orders.deferred.30000"},
		{"exact", `hold_queue_name("orders", "30s")`, "orders.deferred.30000"},
		{"just_past", `hold_queue_name("orders", "30.001s")`, "orders.deferred.31000"},
		{"by_value", `hold_queue_name("orders", "1m")`, "orders.deferred.60000"},
		{"longest_at_1s", `hold_queue_name("orders", "2147483s")`, "orders.deferred.2147483000"},
		{"longest_at_1ms", `hold_queue_name("orders", "2147483647ms", { granularity = "1ms" })`, "orders.deferred.2147483647"},
		{"five_s", `hold_queue_name("orders", "30.5s", { granularity = "5s" })`, "orders.deferred.35000"},
		{"spec_example", `hold_queue_name("jobs", "61s", { deferred_suffix = "-wait-", granularity = "1m" })`, "jobs-wait-120000"},
		{"empty_options", `hold_queue_name("orders", "29.2s", {})`, "orders.deferred.30000"},
		{"null_option", `hold_queue_name("orders", "29.2s", { granularity = null })`, "orders.deferred.30000"},
	}
	var config strings.Builder
	var checks []statecheck.StateCheck
	for _, tt := range tests {
		config.WriteString("output \"" + tt.output + "\" {\n  value = provider::queuey::" + tt.call + "\n}\n")
		checks = append(checks, statecheck.ExpectKnownOutputValue(tt.output, knownvalue.StringExact(tt.want)))
	}
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps:                    []resource.TestStep{{Config: config.String(), ConfigStateChecks: checks}},
	}, featureFunctions)
}

func TestHoldQueueNameFunction_Errors(t *testing.T) {
	tests := []configError{
		{
			// malformed delay
			config: `hold_queue_name("orders", "soon")`,
			want:   []string{`Invalid value for "delay" parameter`, `delay must be a Go duration string`, "from 0s to 2147483s (the longest hold at granularity 1s)"},
		},
		{
			// negative delay
			config: `hold_queue_name("orders", "-1s")`,
			want:   []string{`Invalid value for "delay" parameter`, "delay must not be negative: it may be from 0s to 2147483s"},
		},
		{
			// one second past the longest delay
			config: `hold_queue_name("orders", "2147484s")`,
			want:   []string{`Invalid value for "delay" parameter`, "at granularity 1s the longest delay accepted is 2147483s"},
		},
		{
			// one millisecond past the longest delay at 1ms
			config: `hold_queue_name("orders", "2147483648ms", { granularity = "1ms" })`,
			want:   []string{`Invalid value for "delay" parameter`, "at granularity 1ms the longest delay accepted is 2147483647ms"},
		},
		{
			// zero granularity
			config: `hold_queue_name("orders", "1s", { granularity = "0s" })`,
			want:   []string{`Invalid value for "options" parameter`, "options.granularity must be a positive whole number of milliseconds, from 1ms to 2147483647ms"},
		},
		{
			// sub-millisecond granularity
			config: `hold_queue_name("orders", "1s", { granularity = "0.5ms" })`,
			want:   []string{`Invalid value for "options" parameter`, "options.granularity must be a whole number of milliseconds, from 1ms to 2147483647ms"},
		},
		{
			// unknown options key
			config: `hold_queue_name("orders", "1s", { retry_granularity = "5s" })`,
			want:   []string{`Invalid value for "options" parameter`, `unknown key(s) "retry_granularity"; the keys accepted are dead_suffix, deferred_suffix, granularity`},
		},
		{
			// two options maps
			config: `hold_queue_name("orders", "1s", { granularity = "5s" }, { deferred_suffix = "-wait-" })`,
			want:   []string{`Invalid value for "options" parameter`, "options may be given at most once"},
		},
		{
			// deferred suffix ending in a digit
			config: `hold_queue_name("orders", "1s", { deferred_suffix = "-wait1" })`,
			want:   []string{`Invalid value for "options" parameter`, `deferred_suffix "-wait1" must not end in a digit`},
		},
		{
			// reserved queue name
			config: `hold_queue_name("amq.orders", "1s")`,
			want:   []string{`Invalid value for "queue" parameter`, `starts with "amq."`, "must be 1 to 235 bytes long"},
		},
		{
			// queue name of 236 bytes
			config: `hold_queue_name("` + strings.Repeat("q", 236) + `", "1s")`,
			want:   []string{`Invalid value for "queue" parameter`, "queue name is 236 bytes; it may be 1 to 235 bytes"},
		},
		{
			// queue name too long for the suffixes given
			config: `hold_queue_name("` + strings.Repeat("q", 235) + `", "1s", { deferred_suffix = ".deferred.ttl." })`,
			want:   []string{`Invalid value for "queue" parameter`, "queue name is 235 bytes; it may be 1 to 231 bytes"},
		},
	}
	testErrors(t, functionOutput, tests, featureFunctions)
}

func TestHoldQueueNameFunction_Example(t *testing.T) {
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: readRepoFile(t, "examples/functions/hold_queue_name/function.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("retry_hold_queue", knownvalue.StringExact("orders.deferred.30000")),
				statecheck.ExpectKnownOutputValue("custom_hold_queue", knownvalue.StringExact("orders-wait-120000")),
			},
		}},
	}, featureFunctions)
}
