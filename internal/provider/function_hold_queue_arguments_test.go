package provider

import (
	"math/big"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

func TestHoldQueueArgumentsFunction(t *testing.T) {
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
output "spec" {
  value = provider::queuey::hold_queue_arguments("orders", 30000)
}

output "smallest" {
  value = provider::queuey::hold_queue_arguments("orders", 1)
}

output "largest" {
  value = provider::queuey::hold_queue_arguments("orders", 2147483647)
}

output "whole_float" {
  value = provider::queuey::hold_queue_arguments("orders", 30000.0)
}

output "escaped" {
  value = provider::queuey::hold_queue_arguments("a\"b<c>", 1000)
}

output "as_jsonencode" {
  value = provider::queuey::hold_queue_arguments("a&b<c>", 1000) == jsonencode({
    "x-dead-letter-exchange"    = ""
    "x-dead-letter-routing-key" = "a&b<c>"
    "x-expires"                 = 2000
    "x-message-ttl"             = 1000
  })
}

output "from_delay" {
  value = jsondecode(provider::queuey::hold_queue_arguments("orders", provider::queuey::deferred_ttl_ms("29.2s", "1s")))["x-expires"]
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("spec", knownvalue.StringExact(
					`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":60000,"x-message-ttl":30000}`)),
				statecheck.ExpectKnownOutputValue("smallest", knownvalue.StringExact(
					`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":2,"x-message-ttl":1}`)),
				statecheck.ExpectKnownOutputValue("largest", knownvalue.StringExact(
					`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":4294967294,"x-message-ttl":2147483647}`)),
				statecheck.ExpectKnownOutputValue("whole_float", knownvalue.StringExact(
					`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":60000,"x-message-ttl":30000}`)),
				statecheck.ExpectKnownOutputValue("escaped", knownvalue.StringExact(
					`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"a\"b\u003cc\u003e","x-expires":2000,"x-message-ttl":1000}`)),
				statecheck.ExpectKnownOutputValue("as_jsonencode", knownvalue.Bool(true)),
				statecheck.ExpectKnownOutputValue("from_delay", knownvalue.Int64Exact(60000)),
			},
		}},
	}, featureFunctions)
}

func TestHoldQueueArgumentsFunction_Errors(t *testing.T) {
	tests := []configError{
		{`hold_queue_arguments("orders", 0)`, []string{`Invalid value for "ttl_ms" parameter`, "from 1 to 2147483647; got 0"}},
		{`hold_queue_arguments("orders", -5)`, []string{`Invalid value for "ttl_ms" parameter`, "from 1 to 2147483647; got -5"}},
		{`hold_queue_arguments("orders", 2147483648)`, []string{`Invalid value for "ttl_ms" parameter`, "from 1 to 2147483647; got 2147483648"}},
		{`hold_queue_arguments("orders", 1.5)`, []string{`Invalid value for "ttl_ms" parameter`, "ttl_ms must be a whole number of milliseconds from 1 to 2147483647; got 1.5"}},
		{`hold_queue_arguments("orders", 1e30)`, []string{`Invalid value for "ttl_ms" parameter`, "ttl_ms must be a whole number of milliseconds from 1 to 2147483647; got 1e+30"}},
		{`hold_queue_arguments("amq.orders", 1000)`, []string{`Invalid value for "queue" parameter`, `starts with "amq."`}},
		{`hold_queue_arguments("` + strings.Repeat("q", 236) + `", 1000)`, []string{`Invalid value for "queue" parameter`, "queue name is 236 bytes; it may be 1 to 235 bytes"}},
	}
	testErrors(t, functionOutput, tests, featureFunctions)
}

func TestWholeInt64(t *testing.T) {
	tests := []struct {
		in   *big.Float
		want int64
		ok   bool
	}{
		{big.NewFloat(30000), 30000, true},
		{big.NewFloat(-1), -1, true},
		{big.NewFloat(1.5), 0, false},
		{new(big.Float).SetInf(false), 0, false},
		{new(big.Float).SetFloat64(1e30), 0, false},
		{nil, 0, false},
	}
	for _, tt := range tests {
		got, ok := wholeInt64(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("wholeInt64(%v) = %d, %t; want %d, %t", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestHoldQueueArgumentsFunction_Example(t *testing.T) {
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: readRepoFile(t, "examples/functions/hold_queue_arguments/function.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("hold_queue_arguments", knownvalue.StringExact(
					`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":60000,"x-message-ttl":30000}`)),
				statecheck.ExpectKnownOutputValue("retry_hold_queue_arguments", knownvalue.ObjectExact(map[string]knownvalue.Check{
					"x-dead-letter-exchange":    knownvalue.StringExact(""),
					"x-dead-letter-routing-key": knownvalue.StringExact("orders"),
					"x-expires":                 knownvalue.Int64Exact(60000),
					"x-message-ttl":             knownvalue.Int64Exact(30000),
				})),
			},
		}},
	}, featureFunctions)
}
