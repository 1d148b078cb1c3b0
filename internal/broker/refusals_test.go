package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

func TestClassify_authProblemsOnEveryVersion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		whoami string // answer of /api/whoami; "" when it must not be asked
		want   Cause
	}{
		{"wrong password 3.10", 401, brokertest.LoginFailed310, "", CauseCredentials},
		{"wrong password 4.x", 401, brokertest.LoginFailed4x, "", CauseCredentials},
		{"no management tag", 401, brokertest.NotManagement, "", CauseManagementTag},
		{"no vhost access 3.10/4.0", 401, brokertest.NotVhostUser, "", CauseVhostAccess},
		{"pattern does not match", 401, brokertest.AccessRefused, "", CausePermissions},
		{"unknown reason, whoami answers", 401, `{"error":"x","reason":"Something new"}`, "200", CausePermissions},
		{"unknown reason, whoami refuses the login", 401, `{"error":"x","reason":"Something new"}`, "401", CauseCredentials},
		{"unknown reason, whoami refuses the tag", 401, `{"error":"x","reason":"Something new"}`, "401tag", CauseManagementTag},
		{"no reason (rabbit-hole), whoami refuses", 401, ``, "401", CauseCredentials},
		{"unknown reason, whoami answers 300", 401, `{"error":"x","reason":"Something new"}`, "300", CauseCredentials},
		{"unknown 403, whoami fails", 403, `{"error":"x","reason":"Something new"}`, "400", CausePermissions},
		{"unknown 403, whoami refuses the tag", 403, `{"error":"x","reason":"Something new"}`, "403tag", CauseManagementTag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vb := versionBroker{"queues/v": {tc.status, tc.body}}
			switch tc.whoami {
			case "200":
				vb["whoami"] = answer{200, `{"name":"u","tags":["management"]}`}
			case "401":
				vb["whoami"] = answer{401, brokertest.LoginFailed4x}
			case "401tag":
				vb["whoami"] = answer{401, brokertest.NotManagement}
			case "403tag":
				vb["whoami"] = answer{403, brokertest.NotManagement}
			case "300":
				vb["whoami"] = answer{300, `{}`}
			case "400":
				vb["whoami"] = answer{400, `{}`}
			}
			c, b := vb.client(t)
			_, err := queuesOf(c, context.Background(), "v", Declared, Kept)
			if !errors.Is(err, ErrUnauthorized) {
				t.Fatalf("got %v, want ErrUnauthorized", err)
			}
			if got := errOf(err).Cause; got != tc.want {
				t.Errorf("got %q with cause %d, want %d", err, got, tc.want)
			}
			if tc.whoami == "" && len(b.RequestsMatching("GET whoami")) != 0 {
				t.Errorf("asked /api/whoami for a known reason")
			}
		})
	}
}

func TestAuth_expiredBearerExplained(t *testing.T) {
	api := newAuthAPI(t)
	exp := time.Now().Add(-time.Hour).Unix()
	tok := brokertest.UnsignedJWT(map[string]any{"exp": exp})
	api.refuse["Bearer "+tok] = "Login failed"
	c := fakeClient(t, Config{Endpoint: api.URL, BearerToken: tok})
	err := get(c)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrUnauthorized) || e.Cause != CauseTokenRefused || e.TokenFetched ||
		e.TokenExpiry.Unix() != exp {
		t.Fatalf("got %#v, want a refused token with its expiry", err)
	}
	if strings.Contains(err.Error(), tok) {
		t.Error("the error contains the token")
	}
}

// A token that the broker accepted but that lacks a tag or a permission is
// told apart, and whether it came from the oauth2 grant (the scopes come from
// the identity provider) or is a fixed bearer token (they are in the token).
func TestAuth_grantFollowsMethod(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reason string
		oauth2       bool
		want         Cause
	}{
		{"bearer, no tag", "Not management user", false, CauseTokenNoTag},
		{"bearer, no permission", "Access refused.", false, CauseTokenNoPermission},
		{"oauth2, no tag", "Not management user", true, CauseTokenNoTag},
		{"oauth2, no permission", "Access refused.", true, CauseTokenNoPermission},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := newAuthAPI(t)
			cfg := Config{Endpoint: api.URL, BearerToken: "static"}
			api.refuse["Bearer static"] = tc.reason
			if tc.oauth2 {
				ts := brokertest.NewTokenEndpoint(t, "s3cret")
				cfg.OAuth2 = &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "s3cret"}
				api.refuse["Bearer tok-1"] = tc.reason
			}
			err := get(fakeClient(t, cfg))
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrUnauthorized) || e.Cause != tc.want || e.TokenFetched != tc.oauth2 {
				t.Errorf("got %#v, want ErrUnauthorized with cause %d, fetched %v", err, tc.want, tc.oauth2)
			}
		})
	}
}

// A wrong password is refused once per client (the provider's process):
// every error says so and what to fix, is marked CredentialsRefused (the
// provider explains it once), and requests after the refusal are not sent.
func TestWrongPasswordRefusedOnce(t *testing.T) {
	fake := brokertest.New(t)
	fake.Intercept(func(w http.ResponseWriter, _ *http.Request) bool {
		brokertest.ErrorBody(w, http.StatusUnauthorized, "not_authorised", "Login failed")
		return true
	})
	c := mustNew(t, Config{Endpoint: fake.URL, Username: "guest", Password: "guest"}) // default limits
	errs := make(chan error, 3)
	for i := range 3 {
		go func() { _, err := c.GetVhost(context.Background(), fmt.Sprint("v", i)); errs <- err }()
	}
	got := []error{<-errs, <-errs, <-errs}
	sent := len(fake.Requests())
	_, err := c.GetQueue(context.Background(), "/", "q", Declared)
	got = append(got, err)
	if n := len(fake.Requests()); n != sent {
		t.Errorf("%d requests sent after the refusal, want none", n-sent)
	}
	for _, err := range got {
		var e *Error
		if !errors.As(err, &e) || !e.CredentialsRefused || !errors.Is(err, ErrUnauthorized) ||
			e.Cause != CauseCredentials || e.User != "guest" {
			t.Errorf("got %v, want ErrUnauthorized marked CredentialsRefused, with user \"guest\"", err)
		}
	}
	if !strings.Contains(err.Error(), "not sent") {
		t.Errorf("the request after the refusal: %v, want \"not sent\"", err)
	}
}

// The question to /api/whoami that settles an unknown refusal is asked
// under the caller's context: an interrupt or deadline ends it too.
func TestWhoamiHonoursContext(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s.Script(brokertest.Path("queues/%2F/q"), brokertest.Reply(401, `{"error":"x","reason":"Something new"}`))
	s.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/api/whoami" {
			<-release // never answers
			return true
		}
		return false
	})
	c := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RequestTimeout: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.GetQueue(ctx, "/", "q", Declared)
	if took := time.Since(start); took > 3*time.Second || !errors.Is(err, ErrUnauthorized) {
		t.Errorf("got %v after %s, want ErrUnauthorized once the deadline passed", err, took)
	}
}
