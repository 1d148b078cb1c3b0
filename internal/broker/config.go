package broker

import "time"

// Config is everything needed to reach the management API.
type Config struct {
	Endpoint string
	Username string
	// Password is never written to an error or a log.
	Password string
	// BearerToken, when set, is sent instead of basic auth; never written to an error or a log.
	BearerToken string
	// OAuth2, when set, gets bearer tokens by the client-credentials grant; it wins over
	// BearerToken.
	OAuth2 *OAuth2Config
	// Headers are added to every request; their values are never written to an error or a log.
	Headers  map[string]string
	Insecure bool
	// CACertFile, ClientCertFile and ClientKeyFile are PEM files.
	CACertFile     string
	ClientCertFile string
	ClientKeyFile  string
	// RequestTimeout bounds each HTTP attempt. Zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// RetryBudget is how long a request may be retried: zero means the default, negative none.
	RetryBudget time.Duration
	// Timing is the retry transport's clock; zero means the defaults (unit tests set milliseconds).
	Timing Timing
	// ContactNotes is the folder of the contact notes (contact.go); empty: none.
	ContactNotes string
}

// Timing holds the retry transport's pauses and windows (retry.go); a zero field means its default.
type Timing struct {
	// BackoffFirst is the ceiling of the first pause; each later one doubles, up to BackoffMax.
	BackoffFirst time.Duration
	BackoffMax   time.Duration
	// ConfirmPause is the pause before a 404 seen with no restart is repeated once.
	ConfirmPause time.Duration
	// RecoveryWindow bounds the retries of a recovering node's 404s and "not empty" refusals.
	RecoveryWindow time.Duration
	RestartMemory  time.Duration
	// FirstContact bounds the retries of a refused connection before the broker ever answered.
	FirstContact time.Duration
	// ContactMemory is how long a contact note makes a refused connection a restart.
	ContactMemory time.Duration
	// CheckAge is how old the listing a destroy's checks take may be (reads.go).
	CheckAge time.Duration
}

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

const (
	DefaultRequestTimeout = 30 * time.Second
	DefaultRetryBudget    = 60 * time.Second
	MaxRetryBudget        = time.Hour
)

func (cfg Config) retryBudget() time.Duration {
	if cfg.RetryBudget < 0 {
		return 0
	}
	if cfg.RetryBudget == 0 {
		return DefaultRetryBudget
	}
	return cfg.RetryBudget
}

// maxRequestTime is the longest one request may take: the retry budget plus one request timeout.
func (cfg Config) maxRequestTime() time.Duration {
	timeout := cfg.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	return cfg.retryBudget() + timeout
}
