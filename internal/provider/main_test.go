package provider

import (
	"os"
	"testing"
)

// TestMain lets the test binary double as the test-only rabbitmq provider
// (resource_queue_move_acc_test.go): the migration tests put it where the CLI looks
// for registry.terraform.io/cyrilgdn/rabbitmq and start the CLI with
// serveSourceProviderEnv set, so that the CLI's launch of the plugin serves
// that provider instead of running the tests.
func TestMain(m *testing.M) {
	if os.Getenv(serveSourceProviderEnv) == "1" {
		os.Exit(serveSourceProvider())
	}
	os.Exit(m.Run())
}
