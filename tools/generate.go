//go:build generate

// Package tools holds the go:generate directives that format the examples and
// regenerate docs/ from the schema, the examples and the templates. The
// generator (tfplugindocs) and the release builder (goreleaser) are tools of
// this module (the tool directives of tools/go.mod), so the provider's own
// go.mod carries only what the provider and its tests need. Run them with
// `make generate` (cd tools && go generate ./...).
package tools

// Format the Terraform examples that the docs include.
//go:generate terraform fmt -recursive ../examples/

// Generate the provider documentation into ../docs.
//go:generate go tool tfplugindocs generate --provider-dir .. --provider-name queuey
