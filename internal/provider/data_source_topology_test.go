package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// queueObject checks a queue of the topology: its name and arguments, and a
// hold queue's (ttl > 0) TTL and expiry, twice the TTL.
func queueObject(name string, ttl int64, args string) knownvalue.Check {
	attrs := map[string]knownvalue.Check{"name": knownvalue.StringExact(name), "arguments_json": knownvalue.StringExact(args)}
	if ttl > 0 {
		attrs["ttl_ms"], attrs["expires_ms"] = knownvalue.Int64Exact(ttl), knownvalue.Int64Exact(2*ttl)
	}
	return knownvalue.ObjectExact(attrs)
}

func TestTopologyDataSource_Defaults(t *testing.T) {
	const full = "data.queuey_topology.full"
	const bare = "data.queuey_topology.bare"
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
data "queuey_topology" "full" {
  queue           = "orders"
  message_ttl     = "24h"
  max_priority    = 10
  retry_delays    = ["5m", "29.2s", "30s", "0s"]
  deferral_delays = ["300s", "1.5s", "1m"]
}

data "queuey_topology" "bare" {
  queue = "orders"
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(full, tfjsonpath.New("main_queue"),
					queueObject("orders", 0, `{"x-max-priority":10,"x-message-ttl":86400000}`)),
				statecheck.ExpectKnownValue(full, tfjsonpath.New("dead_queue"), queueObject("orders.dead", 0, `{}`)),
				// 29.2s and 30s share one hold queue, as do 5m and 300s; the
				// list is ascending by TTL.
				statecheck.ExpectKnownValue(full, tfjsonpath.New("hold_queues"), knownvalue.ListExact([]knownvalue.Check{
					queueObject("orders.deferred.1000", 1000,
						`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":2000,"x-message-ttl":1000}`),
					queueObject("orders.deferred.2000", 2000,
						`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":4000,"x-message-ttl":2000}`),
					queueObject("orders.deferred.30000", 30000,
						`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":60000,"x-message-ttl":30000}`),
					queueObject("orders.deferred.60000", 60000,
						`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":120000,"x-message-ttl":60000}`),
					queueObject("orders.deferred.300000", 300000,
						`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":600000,"x-message-ttl":300000}`),
				})),
				statecheck.ExpectKnownValue(full, tfjsonpath.New("hold_queue_pattern"), knownvalue.StringExact(`^orders\.deferred\.[0-9]+$`)),
				statecheck.ExpectKnownValue(full, tfjsonpath.New("queues_pattern"), knownvalue.StringExact(`^orders(\.dead|\.deferred\.[0-9]+)?$`)),
				statecheck.ExpectKnownValue(full, tfjsonpath.New("write_pattern"), knownvalue.StringExact(`^(amq\.default|orders(\.dead|\.deferred\.[0-9]+)?)$`)),

				statecheck.ExpectKnownValue(bare, tfjsonpath.New("main_queue"), queueObject("orders", 0, `{}`)),
				statecheck.ExpectKnownValue(bare, tfjsonpath.New("dead_queue"), queueObject("orders.dead", 0, `{}`)),
				statecheck.ExpectKnownValue(bare, tfjsonpath.New("hold_queues"), knownvalue.ListSizeExact(0)),
			},
		}},
	})
}

func TestTopologyDataSource_ProviderSettings(t *testing.T) {
	const addr = "data.queuey_topology.x"
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: tunedProvider + `

data "queuey_topology" "x" {
  queue           = "orders"
  message_ttl     = "0s"
  retry_delays    = ["29.2s", "30.5s", "120s"]
  deferral_delays = ["61s", "2m"]
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("main_queue"), queueObject("orders", 0, `{"x-message-ttl":0}`)),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("dead_queue"), queueObject("orders-dlq", 0, `{}`)),
				// Retries round to 5s, deferrals to 1m; 120s (retry) and
				// 61s (deferral, rounded to 2m) and 2m share one hold queue.
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("hold_queues").AtSliceIndex(0).AtMapKey("name"), knownvalue.StringExact("orders-wait-30000")),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("hold_queues").AtSliceIndex(1).AtMapKey("name"), knownvalue.StringExact("orders-wait-35000")),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("hold_queues").AtSliceIndex(2).AtMapKey("name"), knownvalue.StringExact("orders-wait-120000")),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("hold_queues"), knownvalue.ListSizeExact(3)),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("hold_queue_pattern"), knownvalue.StringExact(`^orders-wait-[0-9]+$`)),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("queues_pattern"), knownvalue.StringExact(`^orders(-dlq|-wait-[0-9]+)?$`)),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("write_pattern"), knownvalue.StringExact(`^(amq\.default|orders(-dlq|-wait-[0-9]+)?)$`)),
			},
		}},
	})
}

func TestTopologyDataSource_Limits(t *testing.T) {
	const addr = "data.queuey_topology.x"
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
data "queuey_topology" "x" {
  queue        = "` + strings.Repeat("q", 235) + `"
  message_ttl  = "4294967295ms"
  max_priority = 255
  retry_delays = ["2147483s"]
}

data "queuey_topology" "min" {
  queue        = "q"
  max_priority = 1
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("main_queue").AtMapKey("arguments_json"),
					knownvalue.StringExact(`{"x-max-priority":255,"x-message-ttl":4294967295}`)),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("hold_queues").AtSliceIndex(0).AtMapKey("name"),
					knownvalue.StringExact(strings.Repeat("q", 235)+".deferred.2147483000")),
				statecheck.ExpectKnownValue("data.queuey_topology.min", tfjsonpath.New("main_queue").AtMapKey("arguments_json"),
					knownvalue.StringExact(`{"x-max-priority":1}`)),
			},
		}},
	})
}

func TestTopologyDataSource_Errors(t *testing.T) {
	tests := []configError{
		{
			// reserved queue name
			config: `queue = "amq.orders"`,
			want:   []string{"Invalid Queue Name", `queue name "amq.orders" starts with "amq."`, "must be 1 to 235 bytes long"},
		},
		{
			// queue name of 236 bytes
			config: `queue = "` + strings.Repeat("q", 236) + `"`,
			want:   []string{"Invalid Queue Name", "queue name is 236 bytes; it may be 1 to 235 bytes"},
		},
		{
			// max priority 0
			config: `queue = "orders"` + "\n" + `max_priority = 0`,
			want:   []string{"max_priority", "value must be between 1 and 255, got: 0"},
		},
		{
			// max priority 256
			config: `queue = "orders"` + "\n" + `max_priority = 256`,
			want:   []string{"max_priority", "value must be between 1 and 255, got: 256"},
		},
		{
			// sub-millisecond message TTL
			config: `queue = "orders"` + "\n" + `message_ttl = "1500us"`,
			want:   []string{"Invalid Message TTL", "message_ttl is refused", "a whole number of milliseconds from 0ms to 4294967295ms"},
		},
		{
			// message TTL past the largest
			config: `queue = "orders"` + "\n" + `message_ttl = "4294967296ms"`,
			want:   []string{"Invalid Message TTL", "message_ttl is refused", "from 0ms to 4294967295ms"},
		},
		{
			// negative message TTL
			config: `queue = "orders"` + "\n" + `message_ttl = "-1s"`,
			want:   []string{"Invalid Message TTL", "from 0ms to 4294967295ms"},
		},
		{
			// malformed message TTL
			config: `queue = "orders"` + "\n" + `message_ttl = "1 day"`,
			want:   []string{"Invalid Duration", "message_ttl must be a Go duration string", "a whole number of milliseconds from 0ms to 4294967295ms"},
		},
		{
			// malformed retry delay
			config: `queue = "orders"` + "\n" + `retry_delays = ["1s", "2s", "3 s"]`,
			want:   []string{"Invalid Delay", `retry_delays[2] must be a Go duration string`, "from 0s to the longest hold"},
		},
		{
			// negative deferral delay
			config: `queue = "orders"` + "\n" + `deferral_delays = ["-5s"]`,
			want:   []string{"Invalid Delay", `deferral_delays[0] must not be negative`},
		},
		{
			// retry delay past the longest hold
			config: `queue = "orders"` + "\n" + `retry_delays = ["1s", "2147484s"]`,
			want:   []string{"Delay Too Long", "retry_delays[1] 596h31m24s is past the longest hold", "the longest delay accepted is 2147483s", "The granularity is the provider's retry_granularity"},
		},
		{
			// null delay
			config: `queue = "orders"` + "\n" + `deferral_delays = ["1s", null]`,
			want:   []string{"Missing Delay", "deferral_delays[1] is null"},
		},
	}
	testErrors(t, dataBlock("queuey_topology"), tests)
}

func TestTopologyDataSource_Example(t *testing.T) {
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: readRepoFile(t, "examples/data-sources/queuey_topology/data-source.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("main_queue_arguments", knownvalue.StringExact(`{"x-max-priority":10,"x-message-ttl":86400000}`)),
				statecheck.ExpectKnownOutputValue("dead_queue", knownvalue.StringExact("orders.dead")),
				statecheck.ExpectKnownOutputValue("hold_queues", knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact("orders.deferred.1000"),
					knownvalue.StringExact("orders.deferred.5000"),
					knownvalue.StringExact("orders.deferred.30000"),
					knownvalue.StringExact("orders.deferred.300000"),
					knownvalue.StringExact("orders.deferred.3600000"),
				})),
				statecheck.ExpectKnownOutputValue("permissions", knownvalue.ObjectExact(map[string]knownvalue.Check{
					"configure": knownvalue.StringExact(`^orders(\.dead|\.deferred\.[0-9]+)?$`),
					"read":      knownvalue.StringExact(`^orders(\.dead|\.deferred\.[0-9]+)?$`),
					"write":     knownvalue.StringExact(`^(amq\.default|orders(\.dead|\.deferred\.[0-9]+)?)$`),
				})),
			},
		}},
	})
}
