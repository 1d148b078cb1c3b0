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

// testAccPreCheck fails (never skips) an acceptance test whose broker is not
// configured: make test provides one.
func testAccPreCheck(t *testing.T) {
	t.Helper()
	if os.Getenv(EnvEndpoint) == "" {
		t.Fatalf("%s must be set for acceptance tests; run them with `make testacc`, which makes a broker ready", EnvEndpoint)
	}
}
