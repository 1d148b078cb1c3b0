// Command terraform-provider-queuey serves the queuey Terraform provider.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/queuey/terraform-provider-queuey/internal/plugintune"
	"github.com/queuey/terraform-provider-queuey/internal/provider"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers such as delve")
	flag.Parse()

	stop := func() {}
	if !debug {
		stop = plugintune.Start()
	}
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/queuey/queuey",
		Debug:   debug,
	})
	stop()
	if err != nil {
		log.Fatal(err.Error())
	}
}
