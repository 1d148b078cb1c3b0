package broker

import (
	"fmt"
	"strings"
	"time"
)

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
	// timing is the retry transport's clock; zero means the defaults. Only this package's tests set
	// it (pauses of milliseconds), so no caller outside can shorten a pause users wait.
	timing timing
	// ContactNotes is the folder of the contact notes (contact.go); empty: none.
	ContactNotes string
}

// OAuth2Config is the client-credentials grant whose tokens are sent to the management API.
type OAuth2Config struct {
	TokenURL string
	ClientID string
	// ClientSecret is never written to an error or a log.
	ClientSecret string
	Scopes       []string
	// EndpointParams are extra form values of the token request, e.g. audience or resource.
	EndpointParams map[string]string
}

// authMethod is how the client authenticates: basic auth, a fixed bearer token, or tokens of the
// OAuth 2.0 grant.
type authMethod int

const (
	authBasic authMethod = iota
	authBearerToken
	authOAuth2
)

// authKind is the method the settings ask for: OAuth2 wins over BearerToken, which wins over basic
// auth.
func (cfg Config) authKind() authMethod {
	if cfg.OAuth2 != nil {
		return authOAuth2
	}
	if cfg.BearerToken != "" {
		return authBearerToken
	}
	return authBasic
}

// timing holds the retry transport's pauses and windows (retry.go); a zero field means its default.
type timing struct {
	// backoffFirst is the ceiling of the first pause; each later one doubles, up to backoffMax.
	backoffFirst time.Duration
	backoffMax   time.Duration
	// confirmPause is the pause before a 404 seen with no restart is repeated once.
	confirmPause time.Duration
	// recoveryWindow bounds the retries of a recovering node's 404s and "not empty" refusals.
	recoveryWindow time.Duration
	restartMemory  time.Duration
	// firstContact bounds the retries of a refused connection before the broker ever answered.
	firstContact time.Duration
	// contactMemory is how long a contact note makes a refused connection a restart.
	contactMemory time.Duration
	// checkAge is how old the listing a destroy's checks take may be (reads.go).
	checkAge time.Duration
}

const (
	defaultBackoffFirst   = 250 * time.Millisecond
	defaultBackoffMax     = 5 * time.Second
	defaultConfirmPause   = 250 * time.Millisecond
	defaultRecoveryWindow = 10 * time.Second
	defaultRestartMemory  = 2 * time.Minute
	defaultFirstContact   = 10 * time.Second
	defaultContactMemory  = 15 * time.Minute
	defaultCheckAge       = 10 * time.Second
)

func (tm timing) withDefaults() timing {
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&tm.backoffFirst, defaultBackoffFirst}, {&tm.backoffMax, defaultBackoffMax},
		{&tm.confirmPause, defaultConfirmPause}, {&tm.recoveryWindow, defaultRecoveryWindow},
		{&tm.restartMemory, defaultRestartMemory}, {&tm.firstContact, defaultFirstContact},
		{&tm.contactMemory, defaultContactMemory}, {&tm.checkAge, defaultCheckAge},
	} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return tm
}

const (
	DefaultRequestTimeout = 30 * time.Second
	defaultRetryBudget    = 60 * time.Second
	MaxRetryBudget        = time.Hour
)

func (cfg Config) retryBudget() time.Duration {
	if cfg.RetryBudget < 0 {
		return 0
	}
	if cfg.RetryBudget == 0 {
		return defaultRetryBudget
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

// Setting is a setting of Config that a ConfigError is about.
type Setting int

const (
	SettingCACertFile Setting = iota + 1
	SettingClientCertFile
	SettingClientKeyFile
	SettingHeaders
	SettingOAuth2TokenURL
	SettingOAuth2ClientID
	SettingOAuth2ClientSecret
)

// settingWords name the settings in ConfigError's own text.
var settingWords = map[Setting]string{
	SettingCACertFile: "the CA certificate file", SettingClientCertFile: "the client certificate file",
	SettingClientKeyFile: "the client key file", SettingHeaders: "the headers",
	SettingOAuth2TokenURL: "the OAuth 2.0 token URL", SettingOAuth2ClientID: "the OAuth 2.0 client ID",
	SettingOAuth2ClientSecret: "the OAuth 2.0 client secret",
}

// ConfigProblem is what is wrong with the settings of a ConfigError.
type ConfigProblem int

const (
	// ConfigUnreadable: the setting's file could not be read (Err).
	ConfigUnreadable ConfigProblem = iota + 1
	// ConfigKeyPair: the client certificate and key could not be loaded (Err).
	ConfigKeyPair
	// ConfigNoPEM: the file (Values[0]) holds no PEM certificate.
	ConfigNoPEM
	// ConfigHalfPair: one of a pair of settings that go together is set without the other.
	ConfigHalfPair
	// ConfigMissing: the OAuth 2.0 grant needs these settings, and they are empty.
	ConfigMissing
	// ConfigNotHTTP: the URL (Values[0], redacted) is not an http or https URL.
	ConfigNotHTTP
	// ConfigInvalidHeaders: the header names (Values, quoted) are not valid HTTP header names.
	ConfigInvalidHeaders
)

// ConfigError is a Config that New refuses; no setting's secret value is in it.
type ConfigError struct {
	Problem  ConfigProblem
	Settings []Setting
	Values   []string
	Err      error
}

func (e *ConfigError) Error() string {
	names := make([]string, len(e.Settings))
	for i, s := range e.Settings {
		names[i] = settingWords[s]
	}
	what := strings.Join(names, " and ")
	switch e.Problem {
	case ConfigUnreadable:
		return fmt.Sprintf("reading %s: %v", what, e.Err)
	case ConfigKeyPair:
		return fmt.Sprintf("loading %s: %v", what, e.Err)
	case ConfigNoPEM:
		return fmt.Sprintf("%s %s holds no PEM certificate", what, e.Values[0])
	case ConfigHalfPair:
		return what + " go together: set both or neither"
	case ConfigMissing:
		return "the OAuth 2.0 client credentials grant needs " + what
	case ConfigNotHTTP:
		return fmt.Sprintf("%s must be an http or https URL; got %q", what, e.Values[0])
	}
	return fmt.Sprintf("%s: %s are not valid HTTP header names", what, strings.Join(e.Values, ", "))
}

func (e *ConfigError) Unwrap() error { return e.Err }
