package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// clearBrokerEnv makes sure no RABBITMQ_* setting reaches the provider.
func clearBrokerEnv(t *testing.T) {
	t.Helper()
	for _, env := range []string{EnvEndpoint, EnvUsername, EnvPassword, EnvVhost, EnvInsecure, EnvCACert, EnvClientCert, EnvClientKey,
		EnvBearerToken, EnvOAuth2TokenURL, EnvOAuth2ClientID, EnvOAuth2ClientSecret} {
		t.Setenv(env, "")
	}
}

// A pure data source that makes Terraform configure the provider.
const pureHoldQueue = `
data "queuey_hold_queue" "x" {
  queue = "orders"
  delay = "30s"
}
`

func TestProviderConfig_Invalid(t *testing.T) {
	clearBrokerEnv(t)
	tests := []configError{
		{
			// deferred suffix ending in a digit
			config: `deferred_suffix = ".deferred.1"`,
			want:   []string{"Invalid Queue Name Suffixes", "deferred_suffix", `".deferred.1" must not end in a digit`},
		},
		{
			// equal suffixes
			config: `dead_suffix = ".x."` + "\n" + `deferred_suffix = ".x."`,
			want:   []string{"Invalid Queue Name Suffixes", `dead_suffix and deferred_suffix must differ; both are ".x."`},
		},
		{
			// empty dead suffix
			config: `dead_suffix = ""`,
			want:   []string{"Invalid Queue Name Suffixes", `dead_suffix must not be empty (the default is ".dead")`},
		},
		{
			// dead suffix that looks like a hold queue
			config: `dead_suffix = ".deferred.5"`,
			want:   []string{"Invalid Queue Name Suffixes", `dead_suffix ".deferred.5" would make dead-letter queue names look like hold queues`},
		},
		{
			// zero retry granularity
			config: `retry_granularity = "0s"`,
			want:   []string{"Invalid Granularity", "retry_granularity must be a positive whole number of milliseconds, from 1ms to 2147483647ms"},
		},
		{
			// sub-millisecond deferred granularity
			config: `deferred_granularity = "1500us"`,
			want:   []string{"Invalid Granularity", "deferred_granularity must be a whole number of milliseconds, from 1ms to 2147483647ms"},
		},
		{
			// granularity past the longest hold
			config: `deferred_granularity = "2147483648ms"`,
			want:   []string{"Invalid Granularity", "deferred_granularity must be at most 2147483647ms"},
		},
		{
			// malformed granularity
			config: `retry_granularity = "a second"`,
			want:   []string{"retry_granularity", "from 1ms to 2147483647ms", `got "a second"`},
		},
		{
			// endpoint with another scheme
			config: `endpoint = "amqp://127.0.0.1:5672"`,
			want:   []string{"Invalid Endpoint", "endpoint", `"amqp://127.0.0.1:5672" has scheme "amqp"`},
		},
		{
			// endpoint without a host
			config: `endpoint = "http://"`,
			want:   []string{"Invalid Endpoint", "has no host"},
		},
		{
			// endpoint with a query
			config: `endpoint = "http://127.0.0.1:15672/?vhost=x"`,
			want:   []string{"Invalid Endpoint", "without a query or fragment"},
		},
		{
			// request timeout out of range
			config: `request_timeout = "2h"`,
			want:   []string{"request_timeout must be from 1ms to 1h0m0s; got 2h"},
		},
		{
			// retry budget out of range
			config: `retry_budget = "61m"`,
			want:   []string{"retry_budget must be from 0s to 1h0m0s; got 61m"},
		},
		{
			// negative retry budget
			config: `retry_budget = "-1s"`,
			want:   []string{"retry_budget must be from 0s to 1h0m0s; got -1s"},
		},
		{
			// malformed retry budget
			config: `retry_budget = "a minute"`,
			want:   []string{"retry_budget", "from 0s to 1h", `got "a minute"`},
		},
		{
			// client certificate without its key
			config: `clientcert_file = "/tmp/client.pem"`,
			want:   []string{"Incomplete Client Certificate", "set clientkey_file as well"},
		},
		{
			// basic auth and a bearer token
			config: `username = "u"` + "\n" + `password = "p"` + "\n" + `bearer_token = "t"`,
			want: []string{"Conflicting Authentication Settings", "Set exactly one way to authenticate",
				"sets `username` (username and password) and `bearer_token` (bearer_token)"},
		},
		{
			// a bearer token and oauth2
			config: `bearer_token = "t"` + "\n" + `oauth2 {` + "\n" + `token_url = "http://127.0.0.1:1/token"` + "\n" + `}`,
			want:   []string{"Conflicting Authentication Settings", "`bearer_token` (bearer_token) and `oauth2` (the oauth2 block)"},
		},
		{
			// a password and oauth2
			config: `password = "p"` + "\n" + `oauth2 {}`,
			want:   []string{"Conflicting Authentication Settings", "`password` (username and password) and `oauth2`"},
		},
		{
			// oauth2 without client credentials
			config: `oauth2 {` + "\n" + `token_url = "http://127.0.0.1:1/token"` + "\n" + `}`,
			want:   []string{"Missing OAuth 2.0 Setting", "needs client_id", "RABBITMQ_OAUTH2_CLIENT_ID", "needs client_secret"},
		},
	}
	testErrors(t, func(provider string) string {
		return "provider \"queuey\" {\n" + provider + "\n}\n" + pureHoldQueue
	}, tests)
}

func TestProviderConfig_InvalidEndpointFromEnvironment(t *testing.T) {
	clearBrokerEnv(t)
	t.Setenv(EnvEndpoint, "localhost:15672")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config:      `provider "queuey" {}` + pureHoldQueue,
			ExpectError: errorMatching("Invalid "+EnvEndpoint, "the endpoint must be an http or https URL"),
		}},
	})
}

// The environment alone may not mix ways to authenticate either; a way chosen
// in the provider block takes precedence over the environment's.
func TestProviderConfig_AuthFromEnvironment(t *testing.T) {
	clearBrokerEnv(t)
	t.Setenv(EnvUsername, "u")
	t.Setenv(EnvBearerToken, "t")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: `provider "queuey" {}` + pureHoldQueue,
				ExpectError: errorMatching("Conflicting Authentication Settings", "the environment sets `RABBITMQ_USERNAME` (username and password) and",
					"`RABBITMQ_BEARER_TOKEN`"),
			},
			{
				Config: `provider "queuey" {` + "\n" + `bearer_token = "config"` + "\n" + `}` + pureHoldQueue,
			},
		},
	})
}

// An oauth2 block may leave its credentials to the environment.
func TestProviderConfig_OAuth2CredentialsFromEnvironment(t *testing.T) {
	clearBrokerEnv(t)
	t.Setenv(EnvUsername, "ignored")
	t.Setenv(EnvOAuth2ClientID, "terraform")
	t.Setenv(EnvOAuth2ClientSecret, "from-env")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: `provider "queuey" {
  oauth2 {
    token_url = "http://127.0.0.1:1/token"
  }
}
` + pureHoldQueue,
		}},
	})
}

// Suffixes that come from another resource are unknown when Terraform plans
// the data source. Terraform still reads it during the plan (its own
// arguments are known), so the read fails and names the setting.
func TestProviderConfig_UnknownPureSettingAtPlanTime(t *testing.T) {
	clearBrokerEnv(t)
	resource.UnitTest(t, resource.TestCase{
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
	resource.UnitTest(t, resource.TestCase{
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

// With no endpoint anywhere, the pure data sources and the functions work.
func TestProviderConfig_NoEndpointNeededForPureFeatures(t *testing.T) {
	clearBrokerEnv(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		TerraformVersionChecks:   functionsAvailable,
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
	})
}
