package broker

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// The AMQP credentials are the management API's: basic auth as is; a bearer or OAuth 2.0 token as
// the password, with the username or a fixed name; UsesToken says which.
func TestAMQPCredentials(t *testing.T) {
	ts := brokertest.NewTokenEndpoint(t, "amqp-login-secret")
	for _, tc := range []struct {
		name       string
		cfg        Config
		user, pass string
		token      bool
	}{
		{"basic auth", Config{Username: "ops", Password: "pw"}, "ops", "pw", false},
		{"basic auth in the endpoint", Config{Endpoint: "https://ops:pw@h"}, "ops", "pw", false},
		{"bearer token", Config{BearerToken: "tok-123"}, "terraform-provider-queuey", "tok-123", true},
		{"bearer token with a username", Config{Username: "svc", BearerToken: "tok-123"}, "svc", "tok-123", true},
		{"OAuth 2.0", Config{OAuth2: &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "amqp-login-secret"}},
			"terraform-provider-queuey", "tok-1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cfg.Endpoint == "" {
				tc.cfg.Endpoint = "https://h"
			}
			c, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			user, pass, err := c.AMQPCredentials(context.Background(), "connecting")
			if err != nil || user != tc.user || pass != tc.pass || c.UsesToken() != tc.token {
				t.Errorf("got %q %q %v (token %v), want %q %q (token %v)", user, pass, err, c.UsesToken(), tc.user, tc.pass, tc.token)
			}
		})
	}
}

// A token endpoint that refuses the client is the token endpoint's error, as an *Error of the
// operation the credentials were asked for.
func TestAMQPCredentials_tokenRefused(t *testing.T) {
	ts := brokertest.NewTokenEndpoint(t, "another-secret")
	c := mustNew(t, Config{Endpoint: "https://h", RetryBudget: -1,
		OAuth2: &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "wrong-s3cret"}})
	_, _, err := c.AMQPCredentials(context.Background(), `connecting over AMQP to vhost "/"`)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrUnauthorized) || e.Op != `connecting over AMQP to vhost "/"` ||
		strings.Contains(err.Error(), "wrong-s3cret") {
		t.Errorf("got %#v, want the token endpoint's refusal as an *Error", err)
	}
}

// The TLS settings handed out are the management API's, a copy each time.
func TestTLSConfig(t *testing.T) {
	c := mustNew(t, Config{Endpoint: "https://h", Username: "u", Password: "p", Insecure: true})
	a, b := c.TLSConfig(), c.TLSConfig()
	if !a.InsecureSkipVerify || a == b || a == c.tlsConfig {
		t.Errorf("TLSConfig: insecure %v, a copy each time %v", a.InsecureSkipVerify, a != b && a != c.tlsConfig)
	}
}

// Whoami: the user whoami names, and whether its tags (a list, or a comma-separated string as
// RabbitMQ 3.x writes them) hold impersonator; without an answer, the username for basic auth,
// else nobody.
func TestWhoami(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    Config
		answer brokertest.Answer
		user   string
		imp    bool
	}{
		{"tag list", Config{Username: "guest", Password: "p"}, brokertest.Reply(200, `{"name":"ops","tags":["administrator","impersonator"]}`), "ops", true},
		{"tag string", Config{Username: "guest", Password: "p"}, brokertest.Reply(200, `{"name":"ops","tags":"management, impersonator"}`), "ops", true},
		{"no such tag", Config{Username: "guest", Password: "p"}, brokertest.Reply(200, `{"name":"ops","tags":"impersonators,administrator"}`), "ops", false},
		{"no tags", Config{Username: "guest", Password: "p"}, brokertest.Reply(200, `{"name":"ops"}`), "ops", false},
		{"no name", Config{Username: "guest", Password: "p"}, brokertest.Reply(200, `{"tags":"impersonator"}`), "guest", false},
		{"refused, basic auth", Config{Username: "guest", Password: "p"}, brokertest.Reply(401, `{"error":"not_authorized"}`), "guest", false},
		{"refused, token", Config{BearerToken: "tok"}, brokertest.Reply(401, `{"error":"not_authorized"}`), "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := brokertest.New(t)
			s.Script(brokertest.Path("whoami"), tc.answer)
			tc.cfg.Endpoint, tc.cfg.RetryBudget = s.URL, -1
			c, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if user, imp := c.Whoami(context.Background()); user != tc.user || imp != tc.imp {
				t.Errorf("got %q, %v; want %q, %v", user, imp, tc.user, tc.imp)
			}
		})
	}
}
