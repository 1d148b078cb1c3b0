package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

func TestDeadQueueNameFunction(t *testing.T) {
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
output "default" {
  value = provider::queuey::dead_queue_name("orders")
}

output "custom" {
  value = provider::queuey::dead_queue_name("orders", { dead_suffix = "-dlq" })
}

output "shared_options" {
  value = provider::queuey::dead_queue_name("orders", { dead_suffix = "-dlq", deferred_suffix = "-wait-", granularity = "1m" })
}

output "longest" {
  value = provider::queuey::dead_queue_name("` + strings.Repeat("q", 235) + `")
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("default", knownvalue.StringExact("orders.dead")),
				statecheck.ExpectKnownOutputValue("custom", knownvalue.StringExact("orders-dlq")),
				statecheck.ExpectKnownOutputValue("shared_options", knownvalue.StringExact("orders-dlq")),
				statecheck.ExpectKnownOutputValue("longest", knownvalue.StringExact(strings.Repeat("q", 235)+".dead")),
			},
		}},
	}, featureFunctions)
}

func TestDeadQueueNameFunction_Errors(t *testing.T) {
	tests := []configError{
		{`dead_queue_name("amq.orders")`, []string{`Invalid value for "queue" parameter`, `starts with "amq."`, "1 to 235 bytes"}},
		{`dead_queue_name("` + strings.Repeat("q", 236) + `")`, []string{`Invalid value for "queue" parameter`, "queue name is 236 bytes; it may be 1 to 235 bytes"}},
		{`dead_queue_name("")`, []string{`Invalid value for "queue" parameter`, "queue name must not be empty; it may be 1 to 235 bytes"}},
		{`dead_queue_name("orders", { dead = "-dlq" })`, []string{`Invalid value for "options" parameter`, `unknown key(s) "dead"`, "dead_suffix, deferred_suffix, granularity"}},
		{`dead_queue_name("orders", { dead_suffix = ".deferred." })`, []string{`Invalid value for "options" parameter`, "dead_suffix and deferred_suffix must differ"}},
		{`dead_queue_name("orders", { granularity = "0s" })`, []string{`Invalid value for "options" parameter`, "from 1ms to 2147483647ms"}},
	}
	testErrors(t, functionOutput, tests, featureFunctions)
}

func TestDeadQueueNameFunction_Example(t *testing.T) {
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: readRepoFile(t, "examples/functions/dead_queue_name/function.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("dead_queue", knownvalue.StringExact("orders.dead")),
				statecheck.ExpectKnownOutputValue("custom_dead_queue", knownvalue.StringExact("orders-dlq")),
			},
		}},
	}, featureFunctions)
}
