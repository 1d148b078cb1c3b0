package broker

import "time"

// Config is everything needed to reach the management API. Building a client
// from it never contacts the broker.
type Config struct {
	// Endpoint is the management API base URL, http or https; a trailing
	// slash is tolerated.
	Endpoint string
	Username string
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
	// Attempts is how many times a request is tried on connection errors and
	// 5xx answers. Zero means DefaultAttempts.
	Attempts int
}

// Defaults.
const (
	DefaultRequestTimeout = 30 * time.Second
	DefaultAttempts       = 3
)
