// Package broker is the one place that talks to the RabbitMQ management HTTP
// API. It builds the HTTP client (endpoint, basic auth, TLS, per-attempt
// timeouts, bounded retries with backoff on connection errors and 5xx answers,
// kept-alive connections), classifies failures into typed errors, and batches
// queue listings so that many resources refreshed together cost one request
// per vhost.
//
// Nothing here knows about Terraform; the password never appears in an error.
package broker
