package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// holdQueueCheck asserts the name, TTL and expiry (twice the TTL) of a queuey_hold_queue data source:
// the empty path is the data source's whole object.
func holdQueueCheck(label, name string, ttl int64) statecheck.StateCheck {
	return statecheck.ExpectKnownValue("data.queuey_hold_queue."+label, tfjsonpath.Path{}, knownvalue.ObjectPartial(map[string]knownvalue.Check{
		"name": knownvalue.StringExact(name), "ttl_ms": knownvalue.Int64Exact(ttl), "expires_ms": knownvalue.Int64Exact(2 * ttl)}))
}

func TestHoldQueueDataSource_Rounding(t *testing.T) {
	tests := []struct {
		label, delay, granularity string
		ttl                       int64
	}{
		{label: "zero", delay: "0s", ttl: 1000},
		{label: "fraction", delay: "29.2s", ttl: 30000},
		{label: "exact", delay: "30s", ttl: 30000},
		{label: "just_past", delay: "30.001s", ttl: 31000},
		{label: "minute_in_seconds", delay: "60s", ttl: 60000},
		{label: "minute", delay: "1m", ttl: 60000},
		{label: "five_s_fraction", delay: "29.2s", granularity: "5s", ttl: 30000},
		{label: "five_s_past", delay: "30.5s", granularity: "5s", ttl: 35000},
		{label: "granularity_by_value", delay: "30.5s", granularity: "5000ms", ttl: 35000},
		{label: "longest_at_1s", delay: "2147483s", ttl: 2147483000},
		{label: "longest_at_1ms", delay: "2147483647ms", granularity: "1ms", ttl: 2147483647},
		{label: "deferral_default", delay: "29.2s", ttl: 30000},
	}
	var config strings.Builder
	var checks []statecheck.StateCheck
	for _, tt := range tests {
		fmt.Fprintf(&config, "data \"queuey_hold_queue\" %q {\n  queue = \"orders\"\n  delay = %q\n", tt.label, tt.delay)
		if tt.granularity != "" {
			fmt.Fprintf(&config, "  granularity = %q\n", tt.granularity)
		}
		if tt.label == "deferral_default" {
			config.WriteString("  purpose = \"deferral\"\n")
		}
		config.WriteString("}\n")
		checks = append(checks, holdQueueCheck(tt.label, fmt.Sprintf("orders.deferred.%d", tt.ttl), tt.ttl))
	}
	checks = append(checks,
		statecheck.ExpectKnownValue("data.queuey_hold_queue.exact", tfjsonpath.New("arguments_json"), knownvalue.StringExact(
			`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":60000,"x-message-ttl":30000}`)),
		statecheck.ExpectKnownValue("data.queuey_hold_queue.longest_at_1ms", tfjsonpath.New("arguments_json"), knownvalue.StringExact(
			`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":4294967294,"x-message-ttl":2147483647}`)),
	)

	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:            config.String(),
			ConfigStateChecks: checks,
		}},
	})
}

func TestHoldQueueDataSource_ProviderSettings(t *testing.T) {
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: tunedProvider + `

data "queuey_hold_queue" "retry" {
  queue = "orders"
  delay = "29.2s"
}

data "queuey_hold_queue" "retry_explicit" {
  queue   = "orders"
  delay   = "30.5s"
  purpose = "retry"
}

data "queuey_hold_queue" "deferral" {
  queue   = "orders"
  delay   = "61s"
  purpose = "deferral"
}

data "queuey_hold_queue" "override" {
  queue       = "orders"
  delay       = "61s"
  purpose     = "deferral"
  granularity = "1s"
}

data "queuey_hold_queue" "longest_at_1m" {
  queue   = "orders"
  delay   = "35791m"
  purpose = "deferral"
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				holdQueueCheck("retry", "orders-wait-30000", 30000),
				holdQueueCheck("retry_explicit", "orders-wait-35000", 35000),
				holdQueueCheck("deferral", "orders-wait-120000", 120000),
				holdQueueCheck("override", "orders-wait-61000", 61000),
				holdQueueCheck("longest_at_1m", "orders-wait-2147460000", 2147460000),
				// The arguments depend on the queue and the TTL only, never on the suffixes.
				statecheck.ExpectKnownValue("data.queuey_hold_queue.deferral", tfjsonpath.New("arguments_json"), knownvalue.StringExact(
					`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":240000,"x-message-ttl":120000}`)),
			},
		}},
	})
}

func TestHoldQueueDataSource_Errors(t *testing.T) {
	tests := []configError{
		{
			// malformed delay
			config: `queue = "orders"` + "\n" + `delay = "half a minute"`,
			want:   []string{"Invalid Delay", `delay must be a Go duration string`, "from 0s to the longest hold: 2147483s at the default granularity of 1s"},
		},
		{
			// negative delay
			config: `queue = "orders"` + "\n" + `delay = "-1s"`,
			want:   []string{"Invalid Delay", "delay must not be negative: it may be from 0s to the longest hold"},
		},
		{
			// one second past the longest delay at 1s
			config: `queue = "orders"` + "\n" + `delay = "2147484s"`,
			want:   []string{"Delay Too Long", "delay 596h31m24s is past the longest hold", "at granularity 1s the longest delay accepted is 2147483s"},
		},
		{
			// a fraction past the longest delay at 1s
			config: `queue = "orders"` + "\n" + `delay = "2147483.001s"`,
			want:   []string{"Delay Too Long", "the longest delay accepted is 2147483s"},
		},
		{
			// one millisecond past the longest delay at 1ms
			config: `queue = "orders"` + "\n" + `delay = "2147483648ms"` + "\n" + `granularity = "1ms"`,
			want:   []string{"Delay Too Long", "at granularity 1ms the longest delay accepted is 2147483647ms"},
		},
		{
			// past the longest delay at the deferred granularity
			config: `queue = "orders"` + "\n" + `delay = "2147483001ms"` + "\n" + `purpose = "deferral"`,
			want:   []string{"Delay Too Long", "at granularity 1s the longest delay accepted is 2147483s", "The granularity is the provider's deferred_granularity"},
		},
		{
			// zero granularity
			config: `queue = "orders"` + "\n" + `delay = "1s"` + "\n" + `granularity = "0s"`,
			want:   []string{"Invalid Granularity", "granularity must be a positive whole number of milliseconds, from 1ms to 2147483647ms"},
		},
		{
			// sub-millisecond granularity
			config: `queue = "orders"` + "\n" + `delay = "1s"` + "\n" + `granularity = "1500us"`,
			want:   []string{"Invalid Granularity", "granularity must be a whole number of milliseconds, from 1ms to 2147483647ms; got 1.5ms"},
		},
		{
			// malformed granularity
			config: `queue = "orders"` + "\n" + `delay = "1s"` + "\n" + `granularity = "1 second"`,
			want:   []string{"Invalid Duration", "granularity must be a Go duration string", "a whole number of milliseconds from 1ms to 2147483647ms"},
		},
		{
			// unknown purpose
			config: `queue = "orders"` + "\n" + `delay = "1s"` + "\n" + `purpose = "backoff"`,
			want:   []string{"purpose", `value must be one of: ["retry" "deferral"]`},
		},
		{
			// reserved queue name
			config: `queue = "amq.orders"` + "\n" + `delay = "1s"`,
			want:   []string{"Invalid Queue Name", `queue name "amq.orders" starts with "amq."`, "must be 1 to 235 bytes long"},
		},
		{
			// queue name of 236 bytes
			config: `queue = "` + strings.Repeat("q", 236) + `"` + "\n" + `delay = "1s"`,
			want:   []string{"Invalid Queue Name", "queue name is 236 bytes; it may be 1 to 235 bytes"},
		},
		{
			// empty queue name
			config: `queue = ""` + "\n" + `delay = "1s"`,
			want:   []string{"Invalid Queue Name", "queue name must not be empty; it may be 1 to 235 bytes"},
		},
	}
	testErrors(t, dataBlock("queuey_hold_queue"), tests)
}

func TestHoldQueueDataSource_QueueLimitFollowsSuffixes(t *testing.T) {
	// A 14-byte deferred suffix leaves 255-(14+10) = 231 bytes for the name.
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: `
provider "queuey" {
  deferred_suffix = ".deferred.ttl."
}

data "queuey_hold_queue" "x" {
  queue = "` + strings.Repeat("q", 232) + `"
  delay = "1s"
}
`,
				ExpectError: errorMatching("queue name is 232 bytes; it may be 1 to 231 bytes", `".deferred.ttl." followed by a 10-digit TTL`),
			},
			{
				Config: `
provider "queuey" {
  deferred_suffix = ".deferred.ttl."
}

data "queuey_hold_queue" "x" {
  queue = "` + strings.Repeat("q", 231) + `"
  delay = "1s"
}
`,
				ConfigStateChecks: []statecheck.StateCheck{holdQueueCheck("x", strings.Repeat("q", 231)+".deferred.ttl.1000", 1000)},
			},
		},
	})
}

func TestHoldQueueDataSource_Example(t *testing.T) {
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: readRepoFile(t, "examples/data-sources/queuey_hold_queue/data-source.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("retry_hold_queue", knownvalue.StringExact("orders.deferred.30000")),
				statecheck.ExpectKnownOutputValue("retry_hold_queue_arguments", knownvalue.StringExact(
					`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":60000,"x-message-ttl":30000}`)),
				statecheck.ExpectKnownOutputValue("coarse_hold_queue", knownvalue.StringExact("orders.deferred.120000")),
				statecheck.ExpectKnownValue("data.queuey_hold_queue.deferral", tfjsonpath.New("name"), knownvalue.StringExact("orders.deferred.5400000")),
			},
		}},
	})
}

// The queue may come from another resource: Terraform then reads the data
// source during apply, once the name is known.
func TestHoldQueueDataSource_QueueKnownAfterApply(t *testing.T) {
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
resource "terraform_data" "queue" {
  input = "orders"
}

data "queuey_hold_queue" "x" {
  queue = terraform_data.queue.output
  delay = "29.2s"
}
`,
			ConfigStateChecks: []statecheck.StateCheck{holdQueueCheck("x", "orders.deferred.30000", 30000)},
		}},
	})
}
