package broker

import "time"

// Config is everything needed to reach the management API. Building a client
// from it never contacts the broker.
type Config struct {
	// Endpoint is the management API base URL, http or https; a trailing
	// slash is tolerated.
	Endpoint string
	// AMQPEndpoint is the AMQP 0-9-1 URL, amqp or amqps, without
	// credentials or vhost; "" derives it from Endpoint (see amqp.go).
	AMQPEndpoint string
	Username     string
	// Password is never written to an error or a log.
	Password string
	// BearerToken, when set, is sent as "Authorization: Bearer" instead of
	// basic auth. Never written to an error or a log.
	BearerToken string
	// OAuth2, when set, gets the bearer tokens through the client-credentials
	// grant instead. At most one of Username/Password, BearerToken and OAuth2
	// is meant to be set; OAuth2 wins, then BearerToken.
	OAuth2 *OAuth2Config
	// Headers are added to every request. Their values are never written to
	// an error or a log.
	Headers map[string]string
	// Insecure skips TLS certificate verification.
	Insecure bool
	// CACertFile, ClientCertFile and ClientKeyFile are PEM files.
	CACertFile     string
	ClientCertFile string
	ClientKeyFile  string
	// RequestTimeout bounds each HTTP attempt. Zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// RetryBudget is how long after its first attempt a request may still be
	// tried again after a transient failure (see retry.go). Zero means
	// DefaultRetryBudget; a negative value means a single attempt. A request
	// ends at the latest RetryBudget + RequestTimeout after it began.
	RetryBudget time.Duration
}

// Defaults and limits.
const (
	DefaultRequestTimeout = 30 * time.Second
	DefaultRetryBudget    = 60 * time.Second
	// MaxRetryBudget is the largest retry budget the provider accepts.
	MaxRetryBudget = time.Hour
)

// retryBudget returns the budget that cfg means.
func (cfg Config) retryBudget() time.Duration {
	switch {
	case cfg.RetryBudget == 0:
		return DefaultRetryBudget
	case cfg.RetryBudget < 0:
		return 0
	}
	return cfg.RetryBudget
}

// maxRequestTime is the longest one request may take with cfg, all attempts
// and pauses included: the retry budget plus one request timeout (the last
// attempt may begin just before the budget runs out).
func (cfg Config) maxRequestTime() time.Duration {
	timeout := cfg.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	return cfg.retryBudget() + timeout
}
