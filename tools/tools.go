//go:build generate

// Package tools pins the documentation generator and holds the go:generate
// directives that format the examples and regenerate docs/ from the schema,
// the examples and the templates. Run them with `go generate ./...` from the
// repository root (or `make generate`).
package tools

import (
	// Documentation generator.
	_ "github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs"
)

// Format the Terraform examples that the docs include.
//go:generate terraform fmt -recursive ../examples/

// Generate the provider documentation into ../docs.
//go:generate go run github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs generate --provider-dir .. --provider-name queuey
