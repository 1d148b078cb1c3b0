// Command terraform-provider-queuey serves the queuey Terraform provider.
package main

import (
	"context"
	"flag"
	"log"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/queuey/terraform-provider-queuey/internal/provider"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers such as delve")
	flag.Parse()

	if !debug {
		quietUnlessAsked()
	}
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/queuey/queuey",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}

// quietUnlessAsked turns the plugin SDK's logging off when nobody asked for
// logs. Otherwise the framework writes every log line, TRACE included, for
// Terraform to parse and throw away: measured by make bench, that is 30–45%
// of the provider's and Terraform's CPU on a plan of many queues. Setting
// TF_LOG or TF_LOG_PROVIDER (or any of the variables below) brings it back.
func quietUnlessAsked() {
	if os.Getenv("TF_LOG") != "" || os.Getenv("TF_LOG_PROVIDER") != "" {
		return
	}
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER_QUEUEY"} {
		if _, set := os.LookupEnv(v); !set {
			_ = os.Setenv(v, "off")
		}
	}
}
