package broker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/queuey/terraform-provider-queuey/internal/redact"
)

// authTransport sets the Authorization header and the extra headers on every request. With OAuth
// 2.0, a 401 saying the token was not accepted drops the cached token and tries once more with a
// new one.
type authTransport struct {
	next     http.RoundTripper
	method   authMethod
	username string
	password string
	bearer   string
	tokens   *sharedToken
	headers  map[string]string
}

func newAuthTransport(cfg Config, next http.RoundTripper, tokenBase *http.Transport) (*authTransport, error) {
	var invalid []string
	for name := range cfg.Headers {
		if !validHeaderName(name) {
			invalid = append(invalid, fmt.Sprintf("%q", name))
		}
	}
	if len(invalid) > 0 {
		sort.Strings(invalid)
		return nil, &ConfigError{Problem: ConfigInvalidHeaders, Settings: []Setting{SettingHeaders}, Values: invalid}
	}
	t := &authTransport{
		next: next, method: cfg.authKind(), username: cfg.Username, password: cfg.Password,
		bearer: cfg.BearerToken, headers: cfg.Headers,
	}
	if t.method == authOAuth2 {
		o := cfg.OAuth2
		var missing []Setting
		for _, f := range []struct {
			s Setting
			v string
		}{{SettingOAuth2TokenURL, o.TokenURL}, {SettingOAuth2ClientID, o.ClientID}, {SettingOAuth2ClientSecret, o.ClientSecret}} {
			if f.v == "" {
				missing = append(missing, f.s)
			}
		}
		if len(missing) > 0 {
			return nil, &ConfigError{Problem: ConfigMissing, Settings: missing}
		}
		u, err := url.Parse(o.TokenURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, &ConfigError{Problem: ConfigNotHTTP, Settings: []Setting{SettingOAuth2TokenURL}, Values: []string{redact.URL(o.TokenURL)}}
		}
		t.tokens = sharedTokenFor(cfg, tokenBase)
	}
	return t, nil
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	switch t.method {
	case authBasic:
		if t.username != "" || t.password != "" {
			r.SetBasicAuth(t.username, t.password)
		}
		return t.next.RoundTrip(r)
	case authBearerToken:
		r.Header.Set("Authorization", "Bearer "+t.bearer)
		return t.next.RoundTrip(r)
	}

	tok, err := t.tokens.token(req.Context())
	if err != nil {
		return nil, err
	}
	r.Header.Set("Authorization", "Bearer "+tok)
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || (req.Body != nil && req.GetBody == nil) {
		return resp, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, bodyPeek))
	_ = resp.Body.Close()
	if !tokenRefused(string(body)) {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	// The broker refused the token (expired early, revoked, keys rotated): take a new one, once.
	if !t.tokens.invalidate(tok) {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	if tok, err = t.tokens.token(req.Context()); err != nil {
		return nil, err
	}
	r = r.Clone(req.Context())
	if req.GetBody != nil {
		if r.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	r.Header.Set("Authorization", "Bearer "+tok)
	return t.next.RoundTrip(r)
}

// tokenRefused reports whether a 401's body says the token itself was refused, not a permission.
func tokenRefused(body string) bool {
	var answer struct {
		Reason string `json:"reason"`
	}
	if json.Unmarshal([]byte(body), &answer) != nil || answer.Reason == "" {
		return strings.TrimSpace(body) == ""
	}
	lower := strings.ToLower(answer.Reason)
	if strings.Contains(lower, "invalid token") || strings.Contains(lower, "expired") {
		return true
	}
	for _, r := range authReasons {
		if strings.Contains(lower, r.substr) {
			return r.kind == authCredentials
		}
	}
	return false
}

// authProblemKind is what a refusal of the credentials is about (refusals.go).
type authProblemKind int

const (
	authCredentials authProblemKind = iota // wrong username or password
	authTag                                // no management (or administrator) tag
	authVhost                              // no access to the vhost
	authPermissions                        // configure/write/read patterns do not cover the queue
)

// Reasons RabbitMQ gives, lower case, by meaning (4.3 answers 404 for no vhost access).
var authReasons = []struct {
	substr string
	kind   authProblemKind
}{
	{"login failed", authCredentials},
	{"not_authorized", authCredentials},
	{"invalid credentials", authCredentials},
	{"bad credentials", authCredentials},
	{"not management user", authTag},
	{"not administrator user", authTag},
	{"not monitor user", authTag},
	{"not policymaker user", authTag},
	{"virtual host", authVhost},
	{"vhost", authVhost},
	{"access refused", authPermissions},
	{"access_refused", authPermissions},
}

func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if c > 0x7e || c <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	return true
}

// MissingCredentialError says that basic auth lacks its username or password.
type MissingCredentialError struct {
	// Setting is "username" or "password".
	Setting string
}

func (e *MissingCredentialError) Error() string {
	return fmt.Sprintf("the management API needs a %s (basic auth), and none is set", e.Setting)
}

// checkCredentials returns a *MissingCredentialError, unless headers carry an Authorization header.
func checkCredentials(cfg Config) error {
	if cfg.authKind() != authBasic {
		return nil
	}
	for name := range cfg.Headers {
		if http.CanonicalHeaderKey(name) == "Authorization" {
			return nil
		}
	}
	if cfg.Username == "" {
		return &MissingCredentialError{Setting: "username"}
	}
	if cfg.Password == "" {
		return &MissingCredentialError{Setting: "password"}
	}
	return nil
}
