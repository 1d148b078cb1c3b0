package broker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// Basic auth is sent when a username or a password is set, either alone
// included, and then wins over an Authorization header in headers; with
// neither (allowed only beside such a header) the header goes as given.
func TestAuth_basicWhenEitherCredentialSet(t *testing.T) {
	t.Parallel()
	basic := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name, user, pass, want string
	}{
		{"both", "u", "p", basic("u:p")},
		{"username only", "u", "", basic("u:")},
		{"password only", "", "p", basic(":p")},
		{"neither", "", "", "Custom abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := newAuthAPI(t)
			c := newAuthClient(t, Config{Endpoint: api.URL, Username: tc.user, Password: tc.pass, Headers: map[string]string{"Authorization": "Custom abc"}})
			if err := get(t, c); err != nil {
				t.Fatal(err)
			}
			got := api.authorizations()
			if len(got) == 0 {
				t.Fatal("no request reached the fake")
			}
			for i, a := range got {
				if a != tc.want {
					t.Errorf("request %d: Authorization %q, want %q", i, a, tc.want)
				}
			}
		})
	}
}

// A write whose OAuth 2.0 token the broker refused is sent again with a new
// token and its body, not only the reads: the queue is declared as asked.
func TestAuth_oauth2RetryResendsBody(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, "s3cret")
	api := newAuthAPI(t)
	api.refuse["Bearer tok-1"] = "Login failed"
	c := newAuthClient(t, Config{Endpoint: api.URL, OAuth2: &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "s3cret"}})
	if err := c.DeclareQueue(context.Background(), "/", "q", map[string]any{"x-max-length": 7}); err != nil {
		t.Fatalf("a write with a refused token should have been sent again with a new one: %v", err)
	}
	if got := api.authorizations(); len(got) != 2 || got[0] != "Bearer tok-1" || got[1] != "Bearer tok-2" {
		t.Errorf("Authorization headers %q, want tok-1, then tok-2", got)
	}
	q, ok := api.Queue("/", "q")
	if !ok || q.Arguments["x-max-length"] == nil {
		t.Errorf("queue after the retried declaration: %+v (found %v), want x-max-length", q, ok)
	}
}

// Header names are HTTP tokens: visible ASCII up to and including '~',
// without separators; DEL, controls, spaces and non-ASCII are refused.
func TestValidHeaderName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"X-Team":              true,
		"cf-access-client-id": true,
		"X-Tilde~":            true,
		"!#$%&'*+-.^_`|~":     true,
		"":                    false,
		"Bad Name":            false,
		"X:Y":                 false,
		"X\x7f":               false,
		"X\tY":                false,
		"Xé":                  false,
	} {
		if got := validHeaderName(name); got != want {
			t.Errorf("validHeaderName(%q) = %v, want %v", name, got, want)
		}
	}
}

// A token request may take its whole request_timeout, whatever the retry
// budget: a slow identity provider that answers in time gives a token.
func TestAuth_oauth2SlowTokenEndpoint(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, "s3cret")
	ts.Delay = 300 * time.Millisecond
	api := newAuthAPI(t)
	c, err := New(Config{Endpoint: api.URL, RequestTimeout: 5 * time.Second, RetryBudget: 50 * time.Millisecond,
		OAuth2: &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetQueueDeclaration(context.Background(), "/", "q"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want the token and then ErrNotFound", err)
	}
}

// A 4xx of the token endpoint (400 to 499) is a refusal, final for the
// process: later requests get it without asking again. A 5xx (from 500) is
// a failing endpoint, ErrTokenEndpoint, and the next request asks again.
func TestAuth_oauth2TokenStatusFinality(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		final  bool
	}{
		{400, true},
		{499, true},
		{500, false},
		{503, false},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			t.Parallel()
			ts := newTokenServer(t, "s3cret")
			// After a 4xx the oauth2 package asks a second way (credentials
			// in the form): both are refused. A 5xx ends the fetch
			// (finalAnswer). After that the endpoint would give a token.
			answer := brokertest.Reply(tc.status, `{"error":"invalid_request"}`)
			if tc.final {
				ts.Script(answer, answer)
			} else {
				ts.Script(answer)
			}
			api := newAuthAPI(t)
			c := newAuthClient(t, Config{Endpoint: api.URL, OAuth2: &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "s3cret"}})
			wantKind := ErrTokenEndpoint
			if tc.final {
				wantKind = ErrUnauthorized
			}
			if _, err := c.GetQueueDeclaration(context.Background(), "/", "q"); !errors.Is(err, wantKind) || !strings.Contains(err.Error(), fmt.Sprintf("HTTP %d", tc.status)) {
				t.Fatalf("first request: got %v, want %v naming HTTP %d", err, wantKind, tc.status)
			}
			hits := ts.Hits()
			_, err := c.GetQueueDeclaration(context.Background(), "/", "q")
			switch {
			case tc.final && (!errors.Is(err, ErrUnauthorized) || ts.Hits() != hits):
				t.Errorf("after a refusal: got %v and %d more token requests, want the same refusal and none", err, ts.Hits()-hits)
			case !tc.final && !errors.Is(err, ErrNotFound):
				t.Errorf("after a failing endpoint recovered: got %v, want a token and ErrNotFound", err)
			}
		})
	}
}

// The token endpoint's failure reads as its status, the OAuth 2.0 error and
// its description (without a final dot), or the transport error; the hint
// follows the error code, else whether the endpoint answered at all.
func TestTokenError_messageAndHint(t *testing.T) {
	t.Parallel()
	const prefix = "getting an OAuth 2.0 token from oauth2.token_url https://idp/token failed: "
	for _, tc := range []struct {
		name     string
		e        TokenError
		msg      string
		hintHas  string
		hintLack string
	}{
		{"status, code and description", TokenError{Status: 400, Code: "invalid_scope", Description: "Bad scope."},
			`HTTP 400, error "invalid_scope" (Bad scope)`, "oauth2.scopes", ""},
		{"status and code", TokenError{Status: 400, Code: "invalid_request"},
			`HTTP 400, error "invalid_request"`, "oauth2.endpoint_params", ""},
		{"status only", TokenError{Status: 503},
			"HTTP 503", "Check oauth2.token_url, oauth2.client_id", "that it answers"},
		{"status and an unknown code", TokenError{Status: 401, Code: "access_denied"},
			`HTTP 401, error "access_denied"`, "Check oauth2.token_url, oauth2.client_id", "that it answers"},
		{"no answer", TokenError{Err: errors.New("connection refused")},
			"connection refused", "and that it answers", ""},
		{"no token", TokenError{},
			"no token in the answer", "and that it answers", ""},
	} {
		tc.e.TokenURL = "https://idp/token"
		if got := tc.e.Error(); got != prefix+tc.msg {
			t.Errorf("%s: Error() = %q, want %q", tc.name, got, prefix+tc.msg)
		}
		hint := tc.e.Hint()
		if !strings.Contains(hint, tc.hintHas) || (tc.hintLack != "" && strings.Contains(hint, tc.hintLack)) {
			t.Errorf("%s: Hint() = %q, want it to say %q and not %q", tc.name, hint, tc.hintHas, tc.hintLack)
		}
	}
}

// An exp within the first second of the epoch is not positive once read in
// whole seconds: no expiry.
func TestJWTExpiry_firstSecondOfEpoch(t *testing.T) {
	t.Parallel()
	tok := brokertest.JWT(map[string]any{"alg": "HS256"}, map[string]any{"exp": 0.5})
	if got := jwtExpiry(tok); !got.IsZero() {
		t.Errorf("exp 0.5: expiry %v, want none", got)
	}
}

// With cacert_file set, the token endpoint's transport trusts the system's
// CAs and cacert_file's, not cacert_file's alone; without it, the base's
// (the system's) stay as they are.
func TestTokenTransport_keepsSystemCAs(t *testing.T) {
	t.Parallel()
	system, err := x509.SystemCertPool()
	if err != nil {
		t.Skipf("no system pool: %v", err)
	}
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	onlyCA := x509.NewCertPool()
	onlyCA.AppendCertsFromPEM(caPEM)
	want := system.Clone()
	want.AppendCertsFromPEM(caPEM)
	if want.Equal(onlyCA) {
		t.Skip("the system pool is empty: the two cannot be told apart here")
	}
	base := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: onlyCA, Certificates: []tls.Certificate{{}}}}
	got := tokenTransport(Config{CACertFile: file}, base).TLSClientConfig
	if !got.RootCAs.Equal(want) {
		t.Error("with cacert_file the token transport does not trust the system's CAs beside it")
	}
	if len(got.Certificates) != 0 {
		t.Error("the token transport presents a client certificate")
	}
	if got := tokenTransport(Config{}, base).TLSClientConfig; !got.RootCAs.Equal(onlyCA) {
		t.Error("without cacert_file the token transport changed the base's roots")
	}
}

// A token that the broker accepted but that lacks a tag or a permission is
// explained with where the scopes come from: the identity provider for
// oauth2, the token itself for bearer_token.
func TestAuth_grantHintFollowsMethod(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reason string
		oauth2       bool
		want, lack   string
	}{
		{"bearer, no tag", "Not management user", false, "in the bearer_token", "oauth2.client_id"},
		{"bearer, no permission", "Access refused.", false, "in the bearer_token", "oauth2.client_id"},
		{"oauth2, no tag", "Not management user", true, "granted to oauth2.client_id", "in the bearer_token"},
		{"oauth2, no permission", "Access refused.", true, "granted to oauth2.client_id", "in the bearer_token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := newAuthAPI(t)
			cfg := Config{Endpoint: api.URL, BearerToken: "static"}
			api.refuse["Bearer static"] = tc.reason
			if tc.oauth2 {
				ts := newTokenServer(t, "s3cret")
				cfg.OAuth2 = &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "s3cret"}
				api.refuse["Bearer tok-1"] = tc.reason
			}
			err := get(t, newAuthClient(t, cfg))
			if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.lack) {
				t.Errorf("got %v, want ErrUnauthorized saying %q and not %q", err, tc.want, tc.lack)
			}
		})
	}
}
