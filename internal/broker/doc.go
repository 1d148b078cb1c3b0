// Package broker is the one place that talks to the RabbitMQ management HTTP API: the HTTP client
// (endpoint, credentials, TLS, per-attempt timeouts, retries within a budget), typed errors, and
// per-vhost listings shared among concurrent callers (reads.go). It does not use rabbit-hole/v2,
// whose calls take no context.Context and give no control over retries (retry.go lets an operation
// ride through a restart). Nothing here knows about Terraform; the password never appears in an
// error.
package broker
