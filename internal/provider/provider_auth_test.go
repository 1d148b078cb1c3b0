package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// The environment alone may not mix ways to authenticate either; a way chosen
// in the provider block takes precedence over the environment's.
func TestProviderConfig_AuthFromEnvironment(t *testing.T) {
	clearBrokerEnv(t)
	t.Setenv(EnvUsername, "u")
	t.Setenv(EnvBearerToken, "t")
	unitTest(t, resource.TestCase{
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
	unitTest(t, resource.TestCase{
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
