package provider

import (
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// testProviderFactories serves the provider in-process to the terraform CLI
// that terraform-plugin-testing drives.
var testProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"queuey": providerserver.NewProtocol6WithError(New("test")()),
}

// testAccPreCheck comes first in every acceptance test. Without TF_ACC the
// test is skipped before it touches a broker (the unit stage of make test runs
// them that way, and the acceptance stage runs them all); with TF_ACC a
// missing broker fails the test rather than skipping it: make test provides one.
func testAccPreCheck(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: runs with TF_ACC=1 against a broker (make testacc)")
	}
	if os.Getenv(EnvEndpoint) == "" {
		t.Fatalf("%s must be set for acceptance tests; run them with `make testacc`, which makes a broker ready", EnvEndpoint)
	}
}
