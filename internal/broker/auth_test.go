package broker

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// The token endpoint of these tests is brokertest.TokenEndpoint; its JWTs
// are unsigned (brokertest.UnsignedJWT): the client never verifies tokens,
// it only reads exp.

// authAPI is the fake broker, recording the Authorization header of every
// request and answering 401 to the values listed in refuse.
type authAPI struct {
	*brokertest.Server
	mu     sync.Mutex
	auths  []string
	refuse map[string]string // Authorization value → 401 reason
}

func newAuthAPI(t *testing.T) *authAPI {
	a := &authAPI{Server: brokertest.New(t), refuse: map[string]string{}}
	a.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		a.mu.Lock()
		a.auths = append(a.auths, r.Header.Get("Authorization"))
		reason, refused := a.refuse[r.Header.Get("Authorization")]
		a.mu.Unlock()
		if refused {
			brokertest.ErrorBody(w, http.StatusUnauthorized, "not_authorized", reason)
		}
		return refused
	})
	return a
}

// authorizations are the Authorization headers of the requests so far.
func (a *authAPI) authorizations() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.auths)
}

// get makes one read and one write, as Read and Create do.
func get(c *Client) error {
	if _, err := c.GetQueue(context.Background(), "/", "q", Declared); err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	return c.DeclareQueue(context.Background(), "/", "q", nil)
}

func TestAuth_basicAndHeaders(t *testing.T) {
	api := newAuthAPI(t)
	api.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		if h := r.Header; h.Get("X-Team") != "blue" || h.Get("Cf-Access-Client-Id") != "abc" {
			t.Errorf("%s %s: extra headers missing: %v", r.Method, r.URL, h)
		}
		return false
	})
	c := fakeClient(t, Config{Endpoint: api.URL, Username: "u", Password: "p", Headers: map[string]string{"X-Team": "blue", "cf-access-client-id": "abc"}})
	if err := get(c); err != nil {
		t.Fatal(err)
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("u:p"))
	got := api.authorizations()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2 (a read and a write)", len(got))
	}
	for i, a := range got {
		if a != want {
			t.Errorf("request %d: Authorization %q, want %q", i, a, want)
		}
	}
}

func TestAuth_staticBearerReplacesBasic(t *testing.T) {
	api := newAuthAPI(t)
	// A username from the environment must not leak into the requests.
	c := fakeClient(t, Config{Endpoint: api.URL, Username: "u", Password: "p", BearerToken: "static-token"})
	if err := get(c); err != nil {
		t.Fatal(err)
	}
	for i, a := range api.authorizations() {
		if a != "Bearer static-token" {
			t.Errorf("request %d: Authorization %q, want the bearer token only", i, a)
		}
	}
}

func TestAuth_oauth2RetryOnceWithNewToken(t *testing.T) {
	ts := brokertest.NewTokenEndpoint(t, "s3cret")
	api := newAuthAPI(t)
	api.refuse["Bearer tok-1"] = "Login failed"
	c := fakeClient(t, Config{Endpoint: api.URL, OAuth2: &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "s3cret"}})
	if err := get(c); err != nil {
		t.Fatalf("a refused token should have been replaced: %v", err)
	}
	got := api.authorizations()
	if len(got) != 3 || got[0] != "Bearer tok-1" || got[1] != "Bearer tok-2" || got[2] != "Bearer tok-2" {
		t.Errorf("Authorization headers %q, want tok-1 once, then tok-2", got)
	}

	// When the new token is refused too, it is not dropped again right away:
	// each request must not cost a token request.
	api.refuse["Bearer tok-2"] = "Login failed"
	for range 3 {
		if err := get(c); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("got %v, want ErrUnauthorized", err)
		}
	}
	if n := ts.Hits(); n != 2 {
		t.Errorf("token endpoint hit %d times, want 2", n)
	}

	// A refusal that a new token cannot change is not retried, and explained.
	api.refuse["Bearer tok-2"] = "Not management user"
	err := get(c)
	if !errors.Is(err, ErrUnauthorized) || errOf(err).Cause != CauseTokenNoTag {
		t.Fatalf("got %v, want a token without the management tag", err)
	}
	if n := ts.Hits(); n != 2 {
		t.Errorf("token endpoint hit %d times, want 2", n)
	}
}

func TestAuth_settingsRefused(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want ConfigError
	}{
		{Config{OAuth2: &OAuth2Config{ClientID: "x"}},
			ConfigError{Problem: ConfigMissing, Settings: []Setting{SettingOAuth2TokenURL, SettingOAuth2ClientSecret}}},
		{Config{OAuth2: &OAuth2Config{TokenURL: "ftp://x", ClientID: "x", ClientSecret: "y"}},
			ConfigError{Problem: ConfigNotHTTP, Settings: []Setting{SettingOAuth2TokenURL}, Values: []string{"ftp://x"}}},
		{Config{Headers: map[string]string{"Bad Name": "v"}},
			ConfigError{Problem: ConfigInvalidHeaders, Settings: []Setting{SettingHeaders}, Values: []string{`"Bad Name"`}}},
	} {
		tc.cfg.Endpoint = "http://127.0.0.1:1"
		_, err := New(tc.cfg)
		var e *ConfigError
		if !errors.As(err, &e) || !reflect.DeepEqual(*e, tc.want) {
			t.Errorf("New(%+v): got %#v, want %#v", tc.cfg, err, tc.want)
		}
	}
}

func TestTokenRefused(t *testing.T) {
	for body, want := range map[string]bool{
		`{"error":"not_authorized","reason":"Login failed"}`:   true, // 3.x, bad or expired token
		`{"error":"not_authorized","reason":"Not_Authorized"}`: true, // 4.x
		``: true,
		`{"error":"not_authorised","reason":"Not management user"}`:    false,
		`{"error":"not_authorised","reason":"Not administrator user"}`: false,
		`{"error":"not_authorised","reason":"Access refused."}`:        false,
		`<html>401</html>`: false,
	} {
		if got := tokenRefused(body); got != want {
			t.Errorf("tokenRefused(%s) = %v, want %v", body, got, want)
		}
	}
}

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
			c := fakeClient(t, Config{Endpoint: api.URL, Username: tc.user, Password: tc.pass, Headers: map[string]string{"Authorization": "Custom abc"}})
			if err := get(c); err != nil {
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
	ts := brokertest.NewTokenEndpoint(t, "s3cret")
	api := newAuthAPI(t)
	api.refuse["Bearer tok-1"] = "Login failed"
	c := fakeClient(t, Config{Endpoint: api.URL, OAuth2: &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "s3cret"}})
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

// Basic auth without a username or password is refused before any request.
func TestMissingCredentials(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Endpoint: "http://127.0.0.1:15672", Password: "p"}, "username"},
		{Config{Endpoint: "http://127.0.0.1:15672", Username: "u"}, "password"},
		{Config{Endpoint: "http://u@127.0.0.1:15672"}, "password"},
	} {
		_, err := New(tc.cfg)
		var mc *MissingCredentialError
		if !errors.As(err, &mc) || mc.Setting != tc.want {
			t.Errorf("New(%s): got %v, want a MissingCredentialError for %s", tc.cfg.Endpoint, err, tc.want)
		}
	}
	for _, cfg := range []Config{
		{Endpoint: "http://u:p@127.0.0.1:15672"},
		{Endpoint: "http://127.0.0.1:15672", Headers: map[string]string{"authorization": "Basic dTpw"}},
		{Endpoint: "http://127.0.0.1:15672", BearerToken: "t"},
	} {
		if _, err := New(cfg); err != nil {
			t.Errorf("New(%s, %d headers): %v", cfg.Endpoint, len(cfg.Headers), err)
		}
	}
}
