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
	"sync"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

func TestAuth_oauth2SharedToken(t *testing.T) {
	ts := brokertest.NewTokenEndpoint(t, "s3cret")
	ts.ExpiresIn = 3600
	api := newAuthAPI(t)
	cfg := Config{Endpoint: api.URL, Username: "ignored", OAuth2: &OAuth2Config{
		TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "s3cret",
		Scopes: []string{"rabbitmq.tag:management"}, EndpointParams: map[string]string{"audience": "rabbitmq"},
	}}
	if ts.Hits() != 0 {
		t.Fatal("building the client contacted the token endpoint")
	}
	// Two clients with the same settings (as two resources' clients would
	// be) and many concurrent requests: one token.
	c1, c2 := fakeClient(t, cfg), fakeClient(t, cfg)
	if ts.Hits() != 0 {
		t.Fatal("building the client contacted the token endpoint")
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			c := c1
			if i%2 == 1 {
				c = c2
			}
			if err := get(c); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := ts.Hits(); n != 1 {
		t.Errorf("token endpoint hit %d times, want 1", n)
	}
	for i, a := range api.authorizations() {
		if a != "Bearer tok-1" {
			t.Fatalf("request %d: Authorization %q, want Bearer tok-1", i, a)
		}
	}
	form := ts.LastForm()
	for _, want := range []string{"grant_type=client_credentials", "audience=rabbitmq", "scope=rabbitmq.tag%3Amanagement"} {
		if !strings.Contains(form, want) {
			t.Errorf("token request %q lacks %q", form, want)
		}
	}
}

func TestAuth_oauth2RefreshBeforeExpiry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(*brokertest.TokenEndpoint)
	}{
		{"expires_in", func(ts *brokertest.TokenEndpoint) { ts.ExpiresIn = 1 }},
		{"JWT exp without expires_in", func(ts *brokertest.TokenEndpoint) { ts.JWTLife = 2 * time.Second }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := brokertest.NewTokenEndpoint(t, "s3cret")
			tc.setup(ts)
			api := newAuthAPI(t)
			c := fakeClient(t, Config{Endpoint: api.URL, OAuth2: &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "s3cret"}})
			if err := get(c); err != nil {
				t.Fatal(err)
			}
			if err := get(c); err != nil {
				t.Fatal(err)
			}
			if n := ts.Hits(); n != 1 {
				t.Fatalf("token endpoint hit %d times before expiry, want 1", n)
			}
			time.Sleep(2100 * time.Millisecond)
			if err := get(c); err != nil {
				t.Fatal(err)
			}
			if n := ts.Hits(); n != 2 {
				t.Fatalf("token endpoint hit %d times, want 2 (one refresh)", n)
			}
		})
	}
}

func TestAuth_oauth2WrongSecret(t *testing.T) {
	ts := brokertest.NewTokenEndpoint(t, "right")
	api := newAuthAPI(t)
	c := fakeClient(t, Config{Endpoint: api.URL, OAuth2: &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "wrong-Secret-42"}})
	for range 5 {
		err := get(c)
		if !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("got %v, want ErrUnauthorized", err)
		}
		msg := err.Error()
		var e *Error
		var te *TokenError
		if !errors.As(err, &e) || e.Cause != CauseTokenEndpoint || !errors.As(e.Err, &te) || te.Code != "invalid_client" ||
			te.TokenURL != ts.URL || !strings.Contains(msg, ts.URL) {
			t.Errorf("got %v, want the token endpoint's invalid_client", err)
		}
		if strings.Contains(msg, "wrong-Secret-42") {
			t.Error("the error contains the client secret")
		}
	}
	// The oauth2 package tries the credentials in a header, then in the form:
	// two requests, and none after that.
	if n := ts.Hits(); n > 2 {
		t.Errorf("token endpoint hit %d times for 5 requests, want at most 2", n)
	}
	if len(api.authorizations()) != 0 {
		t.Error("the management API was called without a token")
	}
}

func TestRefreshTime(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		life, early time.Duration
	}{
		{3 * time.Second, 750 * time.Millisecond},
		{time.Hour, time.Minute},
		{-time.Second, 0},
	} {
		got := refreshTime(now, now.Add(tc.life))
		if want := now.Add(tc.life - tc.early); !got.Equal(want) {
			t.Errorf("life %s: refresh at %s, want %s", tc.life, got.Sub(now), want.Sub(now))
		}
	}
	if !refreshTime(now, time.Time{}).IsZero() {
		t.Error("a token without expiry should never be refreshed by time")
	}
}

// A token endpoint that keeps failing costs one retry budget, shared by every
// request that was waiting for that token, not one budget per request; the
// error is no credential refusal but ErrTokenEndpoint.
func TestAuth_oauth2FailingEndpointShared(t *testing.T) {
	ts := brokertest.NewTokenEndpoint(t, "s")
	ts.Fail(http.StatusServiceUnavailable)
	api := newAuthAPI(t)
	c := mustNew(t, Config{Endpoint: api.URL, RequestTimeout: 5 * time.Second, RetryBudget: time.Second,
		OAuth2: &OAuth2Config{TokenURL: ts.URL + "/token-" + t.Name(), ClientID: "terraform", ClientSecret: "s"}})
	const callers = 4
	errs := make(chan error, callers)
	for i := range callers {
		go func() {
			_, err := c.GetQueue(context.Background(), "/", fmt.Sprintf("q%d", i), Declared)
			errs <- err
		}()
	}
	for range callers {
		err := <-errs
		if !errors.Is(err, ErrTokenEndpoint) || errors.Is(err, ErrUnauthorized) {
			t.Errorf("got %v, want ErrTokenEndpoint", err)
		} else if e := (*Error)(nil); !errors.As(err, &e) || e.Cause != CauseTokenEndpoint || !strings.Contains(err.Error(), "HTTP 503") {
			t.Errorf("error %q does not name the token endpoint's answer", err)
		}
	}
	// One budget of 1 s, pauses from 250 ms: 4 or 5 attempts. The oauth2
	// package's second way of sending the credentials doubles that; four
	// budgets spent one after the other would make it about 30.
	if n := ts.Hits(); n > 6 {
		t.Errorf("token endpoint hit %d times by %d waiting requests: each spent a retry budget of its own", n, callers)
	}
	if len(api.authorizations()) != 0 {
		t.Error("the management API was called without a token")
	}
}

// Every shape of token the client may be given: only a JWT with a positive
// numeric exp has an expiry, whatever its signing algorithm.
func TestJWTExpiry(t *testing.T) {
	t.Parallel()
	exp := time.Unix(1_900_000_000, 0)
	seg := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	hs256 := map[string]any{"alg": "HS256", "typ": "JWT"}
	padded := base64.URLEncoding.EncodeToString([]byte(`{"alg":"HS256"}`)) + "." +
		base64.URLEncoding.EncodeToString([]byte(`{"exp":1900000000,"n":1}`)) + ".c2ln"
	for _, tc := range []struct {
		name string
		tok  string
		want time.Time
	}{
		{"opaque token", "tok-1", time.Time{}},
		{"two segments", seg(`{"alg":"HS256"}`) + "." + seg(`{"exp":1900000000}`), time.Time{}},
		{"exp", brokertest.JWT(hs256, map[string]any{"exp": exp.Unix()}), exp},
		{"fractional exp", brokertest.JWT(hs256, map[string]any{"exp": 1_900_000_000.75}), exp},
		{"padded segments", padded, exp},
		{"RS256 (the broker's kind)", brokertest.JWT(map[string]any{"alg": "RS256", "kid": "k"}, map[string]any{"exp": exp.Unix()}), exp},
		{"unknown alg", brokertest.JWT(map[string]any{"alg": "XY512"}, map[string]any{"exp": exp.Unix()}), exp},
		{"no alg", brokertest.JWT(map[string]any{"typ": "JWT"}, map[string]any{"exp": exp.Unix()}), exp},
		{"no exp", brokertest.JWT(hs256, map[string]any{"sub": "terraform"}), time.Time{}},
		{"exp 0", brokertest.JWT(hs256, map[string]any{"exp": 0}), time.Time{}},
		{"negative exp", brokertest.JWT(hs256, map[string]any{"exp": -5}), time.Time{}},
		{"exp as a string", brokertest.JWT(hs256, map[string]any{"exp": "1900000000"}), time.Time{}},
		{"claims not base64", seg(`{"alg":"HS256"}`) + ".%%%." + "c2ln", time.Time{}},
		{"claims not JSON", seg(`{"alg":"HS256"}`) + "." + seg(`exp=1`) + ".c2ln", time.Time{}},
		{"claims a JSON array", seg(`{"alg":"HS256"}`) + "." + seg(`[1]`) + ".c2ln", time.Time{}},
		{"header not JSON", seg(`alg`) + "." + seg(`{"exp":1900000000}`) + ".c2ln", time.Time{}},
	} {
		if got := jwtExpiry(tc.tok); !got.Equal(tc.want) {
			t.Errorf("%s: expiry %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A token request may take its whole request_timeout, whatever the retry
// budget: a slow identity provider that answers in time gives a token.
func TestAuth_oauth2SlowTokenEndpoint(t *testing.T) {
	t.Parallel()
	ts := brokertest.NewTokenEndpoint(t, "s3cret")
	ts.Delay = 300 * time.Millisecond
	api := newAuthAPI(t)
	c := mustNew(t, Config{Endpoint: api.URL, RequestTimeout: 5 * time.Second, RetryBudget: 50 * time.Millisecond,
		OAuth2: &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "s3cret"}})
	if _, err := c.GetQueue(context.Background(), "/", "q", Declared); !errors.Is(err, ErrNotFound) {
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
			ts := brokertest.NewTokenEndpoint(t, "s3cret")
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
			c := fakeClient(t, Config{Endpoint: api.URL, OAuth2: &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "s3cret"}})
			wantKind := ErrTokenEndpoint
			if tc.final {
				wantKind = ErrUnauthorized
			}
			if _, err := c.GetQueue(context.Background(), "/", "q", Declared); !errors.Is(err, wantKind) || !strings.Contains(err.Error(), fmt.Sprintf("HTTP %d", tc.status)) {
				t.Fatalf("first request: got %v, want %v naming HTTP %d", err, wantKind, tc.status)
			}
			hits := ts.Hits()
			_, err := c.GetQueue(context.Background(), "/", "q", Declared)
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
// its description (without a final dot), or the transport error. What to do
// next is the provider's (TestBrokerNextStep).
func TestTokenError_message(t *testing.T) {
	t.Parallel()
	const prefix = "getting an OAuth 2.0 token from the token endpoint https://idp/token failed: "
	for _, tc := range []struct {
		name string
		e    TokenError
		msg  string
	}{
		{"status, code and description", TokenError{Status: 400, Code: "invalid_scope", Description: "Bad scope."},
			`HTTP 400, error "invalid_scope" (Bad scope)`},
		{"status and code", TokenError{Status: 400, Code: "invalid_request"}, `HTTP 400, error "invalid_request"`},
		{"status only", TokenError{Status: 503}, "HTTP 503"},
		{"no answer", TokenError{Err: errors.New("connection refused")}, "connection refused"},
		{"no token", TokenError{}, "no token in the answer"},
	} {
		tc.e.TokenURL = "https://idp/token"
		if got := tc.e.Error(); got != prefix+tc.msg {
			t.Errorf("%s: Error() = %q, want %q", tc.name, got, prefix+tc.msg)
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
