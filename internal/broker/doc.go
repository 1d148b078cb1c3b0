// Package broker is the one place that talks to the RabbitMQ management HTTP
// API. It builds the HTTP client (endpoint; basic auth, a bearer token or
// OAuth 2.0 client credentials; extra headers; TLS; per-attempt timeouts,
// bounded retries with backoff on connection errors and 5xx answers;
// kept-alive connections), classifies failures into typed errors, and shares
// the per-vhost queue listings among concurrent callers (reads.go) so that
// many resources refreshed together cost one request per vhost. It makes
// only the calls the provider needs: the administration calls of the tests
// and the bench are in internal/brokertest.
//
// Those administration calls use rabbit-hole/v2, but the provider's own
// requests do not: its calls take no context.Context, so a cancelled plan or
// destroy could not stop one, and it gives no control over retries, whose
// rules (retry.go) are what lets an operation ride through a broker restart.
//
// Nothing here knows about Terraform; the password never appears in an error.
package broker
