package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// clearBrokerEnv makes sure none of the environment variables of provider_env.go reaches the provider: it reads
// their names from that file, so that a new one is cleared too, and clears every RABBITMQ_ variable set, should
// that file's layout change.
func clearBrokerEnv(t *testing.T) {
	t.Helper()
	names := regexp.MustCompile(`(?m)^\s*Env\w+\s*=\s*"(\w+)"`).FindAllStringSubmatch(readRepoFile(t, "internal/provider/provider_env.go"), -1)
	if len(names) == 0 {
		t.Fatal("found no Env constant in provider_env.go, where clearBrokerEnv reads the names it clears")
	}
	for _, m := range names {
		t.Setenv(m[1], "")
	}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "RABBITMQ_") {
			t.Setenv(name, "")
		}
	}
}

// A pure data source that makes Terraform configure the provider.
const pureHoldQueue = `
data "queuey_hold_queue" "x" {
  queue = "orders"
  delay = "30s"
}
`

func TestProviderConfig_InvalidEndpointFromEnvironment(t *testing.T) {
	clearBrokerEnv(t)
	t.Setenv(EnvEndpoint, "localhost:15672")
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      `provider "queuey" {}` + pureHoldQueue,
			ExpectError: errorMatching("Invalid "+EnvEndpoint, "the endpoint must be an http or https URL"),
		}},
	})
}

// Suffixes that come from another resource are unknown when Terraform plans
// the data source. Terraform still reads it during the plan (its own
// arguments are known), so the read fails and names the setting.
func TestProviderConfig_UnknownPureSettingAtPlanTime(t *testing.T) {
	clearBrokerEnv(t)
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: `
resource "terraform_data" "suffix" {
  input = "-dlq"
}

provider "queuey" {
  dead_suffix = terraform_data.suffix.output
}
` + pureHoldQueue,
				ExpectError: errorMatching("Provider Setting Unknown At Plan Time", "dead_suffix come from values not known until apply"),
			},
			{
				Config: `
resource "terraform_data" "granularity" {
  input = "5s"
}

provider "queuey" {
  retry_granularity = terraform_data.granularity.output
}

data "queuey_topology" "x" {
  queue = "orders"
}
`,
				ExpectError: errorMatching("Provider Setting Unknown At Plan Time", "retry_granularity come from values not known until apply"),
			},
		},
	})
}

// Broker settings that are unknown at plan time are accepted: the pure data
// sources do not need them.
func TestProviderConfig_UnknownBrokerSettingAtPlanTime(t *testing.T) {
	clearBrokerEnv(t)
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
resource "terraform_data" "endpoint" {
  input = "http://127.0.0.1:15672"
}

provider "queuey" {
  endpoint = terraform_data.endpoint.output
  vhost    = terraform_data.endpoint.id
  headers  = { "X-Team" = terraform_data.endpoint.id }

  oauth2 {
    token_url     = terraform_data.endpoint.output
    client_id     = "terraform"
    client_secret = terraform_data.endpoint.id
  }
}
` + pureHoldQueue,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.queuey_hold_queue.x", tfjsonpath.New("name"), knownvalue.StringExact("orders.deferred.30000")),
			},
		}},
	})
}

// Settings that can never work fail the plan at once (default retry budget)
// with the cause and the fix.
func TestProvider_endpointMistakes(t *testing.T) {
	clearBrokerEnv(t)
	fake := brokertest.New(t)
	amqp := brokertest.RawListener(t, brokertest.AMQPGreeting)
	// atPlan: the error must come at plan (PlanOnly), not only at apply.
	tests := []struct {
		name, provider, want string
		atPlan               bool
	}{
		{"no username", `endpoint = "` + fake.URL + `"` + "\npassword = \"p\"",
			`(?s)Missing Management API Username.*set\s+.username.\s+in the provider "queuey"\s+block or the\s+RABBITMQ_USERNAME`, true},
		{"no password", `endpoint = "` + fake.URL + `"` + "\nusername = \"u\"",
			`(?s)Missing Management API Password.*RABBITMQ_PASSWORD`, true},
		{"the AMQP port", `endpoint = "http://` + amqp + `"` + "\nusername = \"u\"\npassword = \"p\"",
			`(?s)Wrong Management API Endpoint.*AMQP\s+port.*usually\s+on\s+port\s+15672`, false},
		{"an endpoint ending in /api", `endpoint = "` + fake.URL + `/api"` + "\nusername = \"u\"\npassword = \"p\"",
			`(?s)Wrong Management API Endpoint.*without\s+/api`, false},
		{"no scheme", `endpoint = "127.0.0.1:15672"`,
			`(?s)"127.0.0.1:15672"\s+has\s+no\s+scheme:\s+write\s+it\s+as\s+http://127.0.0.1:15672`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			unitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config:      "provider \"queuey\" {\n" + tt.provider + "\n}\nresource \"queuey_queue\" \"q\" {\n  name = \"q\"\n}\n",
					PlanOnly:    tt.atPlan,
					ExpectError: regexp.MustCompile(tt.want),
				}},
			})
			// Terraform itself takes a second or two; a retried error takes 60s.
			if elapsed := time.Since(start); elapsed > 15*time.Second {
				t.Errorf("took %s", elapsed)
			}
		})
	}
}

// The provider's logs name the version it was built as (make release-check
// checks the same line in a release build's TF_LOG output).
func TestProviderConfigure_LogsVersion(t *testing.T) {
	clearBrokerEnv(t)
	for _, version := range []string{"0.3.0", "0.3.1-snapshot", "dev"} {
		t.Run(version, func(t *testing.T) {
			var logs bytes.Buffer
			ctx := tflogtest.RootLogger(context.Background(), &logs)
			p := New(version)()
			var s provider.SchemaResponse
			p.Schema(ctx, provider.SchemaRequest{}, &s)
			var resp provider.ConfigureResponse
			p.Configure(ctx, provider.ConfigureRequest{Config: configOf(t, tfsdk.Config{Schema: s.Schema}, nil)}, &resp)
			if resp.Diagnostics.HasError() {
				t.Fatalf("Configure of an empty provider block failed: %v", resp.Diagnostics)
			}
			entries, err := tflogtest.MultilineJSONDecode(&logs)
			if err != nil {
				t.Fatalf("decoding the logs: %v", err)
			}
			for _, e := range entries {
				if e["@message"] == "configuring the queuey provider" && e["version"] == version {
					return
				}
			}
			got, _ := json.Marshal(entries)
			t.Fatalf("no log entry names version %q; the logs: %s", version, got)
		})
	}
}

// amqp_endpoint: a bad value is a plan error naming the setting, from the
// configuration or the environment.
func TestProvider_amqpEndpointChecked(t *testing.T) {
	clearBrokerEnv(t)
	s := brokertest.New(t)
	cfg := func(extra string) string { return fakeProviderConfig(s, "", extra) }
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg(`amqp_endpoint = "http://127.0.0.1:5672"`), PlanOnly: true,
				ExpectError: regexp.MustCompile(`Invalid AMQP Endpoint(.|\n)*amqp_endpoint must be an amqp or amqps URL`)},
			{Config: cfg(`amqp_endpoint = "amqp://guest:guest@127.0.0.1:5672"`), PlanOnly: true,
				ExpectError: regexp.MustCompile(`without\s+credentials`)},
		},
	})
}

// The provider's settings reach the client: amqp_endpoint as given, else
// derived from endpoint.
func TestProvider_amqpEndpointDerived(t *testing.T) {
	for _, tc := range []struct{ endpoint, amqpEndpoint, want string }{
		{"http://rabbit.internal:15672", "", "amqp://rabbit.internal:5672"},
		{"https://rabbit.internal", "", "amqps://rabbit.internal:5671"},
		{"https://rabbit.internal", "amqp://10.1.2.3:5673", "amqp://10.1.2.3:5673"},
	} {
		d := &providerData{endpointSet: true, brokerConfig: broker.Config{Endpoint: tc.endpoint, Username: "u", Password: "p"},
			amqpEndpoint: tc.amqpEndpoint}
		m, diags := d.messageMover()
		if diags.HasError() || m.URL() != tc.want {
			t.Errorf("%s + %q: %v %v, want %s", tc.endpoint, tc.amqpEndpoint, m, diags, tc.want)
		}
	}
}
