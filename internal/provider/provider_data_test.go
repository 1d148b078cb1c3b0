package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/queuey/terraform-provider-queuey/internal/broker"
)

// With no endpoint anywhere, the pure data sources and the functions work.
func TestProviderConfig_NoEndpointNeededForPureFeatures(t *testing.T) {
	clearBrokerEnv(t)
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
provider "queuey" {}

data "queuey_hold_queue" "x" {
  queue = "orders"
  delay = "30s"
}

data "queuey_topology" "x" {
  queue        = "orders"
  retry_delays = ["30s"]
}

output "hold" {
  value = provider::queuey::hold_queue_name("orders", "30s")
}

output "dead" {
  value = provider::queuey::dead_queue_name("orders")
}

output "ttl" {
  value = provider::queuey::deferred_ttl_ms("30s", "1s")
}

output "arguments" {
  value = provider::queuey::hold_queue_arguments("orders", 30000)
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.queuey_hold_queue.x", tfjsonpath.New("name"), knownvalue.StringExact("orders.deferred.30000")),
				statecheck.ExpectKnownValue("data.queuey_topology.x", tfjsonpath.New("hold_queues").AtSliceIndex(0).AtMapKey("name"),
					knownvalue.StringExact("orders.deferred.30000")),
				statecheck.ExpectKnownValue("data.queuey_topology.x", tfjsonpath.New("dead_queue").AtMapKey("name"), knownvalue.StringExact("orders.dead")),
				statecheck.ExpectKnownOutputValue("hold", knownvalue.StringExact("orders.deferred.30000")),
				statecheck.ExpectKnownOutputValue("dead", knownvalue.StringExact("orders.dead")),
				statecheck.ExpectKnownOutputValue("ttl", knownvalue.Int64Exact(30000)),
				statecheck.ExpectKnownOutputValue("arguments", knownvalue.StringExact(
					`{"x-dead-letter-exchange":"","x-dead-letter-routing-key":"orders","x-expires":60000,"x-message-ttl":30000}`)),
			},
		}},
	}, featureFunctions)
}

// Refused credentials are explained in the first diagnostic of the process;
// the others point to it. Other errors are always given in full.
func TestExplainCredentialsOnce(t *testing.T) {
	d := &providerData{}
	refused := &broker.Error{Op: "reading vhost \"/\"", Endpoint: "http://x", Status: 401, Reason: "Login failed",
		Kind: broker.ErrUnauthorized, CredentialsRefused: true, Cause: broker.CauseCredentials, User: "u"}
	other := &broker.Error{Op: "reading queue", Endpoint: "http://x", Status: 503, Kind: broker.ErrUnavailable, Cause: broker.CauseNodeDown}
	got := []string{d.explain(other), d.explain(refused), d.explain(refused), d.explain(other)}
	for i, want := range []string{"bring it back", "check username and password", "see that error, which says what to fix", "bring it back"} {
		if !strings.Contains(got[i], want) {
			t.Errorf("explanation %d: %q lacks %q", i, got[i], want)
		}
	}
	if strings.Contains(got[2], "check username") {
		t.Errorf("the second explanation repeats the hint: %q", got[2])
	}
}
