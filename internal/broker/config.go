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
	// Timing is the retry transport's clock (see retry.go). It is not a
	// provider setting: the provider leaves it zero, which means the
	// defaults, and unit tests set milliseconds.
	Timing Timing
	// ContactNotes is the folder of the notes that carry "the broker has
	// answered" across provider processes (see contact.go); empty: none.
	ContactNotes string
}

// Timing holds the pauses and windows of the retry transport (see retry.go).
// A zero field means its default (the Default* constants).
type Timing struct {
	// BackoffFirst is the ceiling of the first pause between attempts; each
	// later ceiling doubles, up to BackoffMax.
	BackoffFirst time.Duration
	BackoffMax   time.Duration
	// ConfirmPause is the pause before a 404 seen with no restart is
	// repeated once.
	ConfirmPause time.Duration
	// RecoveryWindow bounds the retries of the 404s and "not empty"
	// refusals of a node that may be recovering, from a request's first
	// such answer after a restart was seen.
	RecoveryWindow time.Duration
	// RestartMemory is how long a sign of a restart is remembered.
	RestartMemory time.Duration
	// FirstContact bounds the retries of a refused connection or a host
	// that does not resolve before the broker has ever answered this client.
	FirstContact time.Duration
	// ContactMemory is how long a contact note (see contact.go) makes a
	// refused connection a restart rather than a first contact.
	ContactMemory time.Duration
	// CheckAge is how long before a destroy's checks began the listing
	// they find its queues in may have begun (see reads.go).
	CheckAge time.Duration
}

// The retry transport's default clock (see retry.go for each rule).
const (
	defaultBackoffFirst   = 250 * time.Millisecond
	defaultBackoffMax     = 5 * time.Second
	DefaultConfirmPause   = 250 * time.Millisecond
	DefaultRecoveryWindow = 10 * time.Second
	DefaultRestartMemory  = 2 * time.Minute
	DefaultFirstContact   = 10 * time.Second
	DefaultContactMemory  = 15 * time.Minute
	defaultCheckAge       = 10 * time.Second
)

// withDefaults returns tm with every zero field set to its default.
func (tm Timing) withDefaults() Timing {
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&tm.BackoffFirst, defaultBackoffFirst}, {&tm.BackoffMax, defaultBackoffMax},
		{&tm.ConfirmPause, DefaultConfirmPause}, {&tm.RecoveryWindow, DefaultRecoveryWindow},
		{&tm.RestartMemory, DefaultRestartMemory}, {&tm.FirstContact, DefaultFirstContact},
		{&tm.ContactMemory, DefaultContactMemory}, {&tm.CheckAge, defaultCheckAge},
	} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return tm
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
