// Command terraform-provider-queuey serves the queuey Terraform provider.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/queuey/terraform-provider-queuey/internal/plugintune"
	"github.com/queuey/terraform-provider-queuey/internal/provider"
)

// version is set at build time with -ldflags "-X main.version=..." (make build: git describe; a
// release: goreleaser's version, e.g. 0.3.0).
var version = "dev"

func main() {
	var debug, showVersion bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers such as delve")
	flag.BoolVar(&showVersion, "version", false, "print the provider's name and version and exit")
	flag.Parse()
	if showVersion {
		fmt.Println("terraform-provider-queuey " + version)
		return
	}

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
