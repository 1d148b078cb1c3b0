package mover

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// What the AMQP handshake sends and what a refusal says: a refused login is
// ErrUnauthorized naming the user (basic auth) or the token, never the
// password; a vhost the user may not open names the permission; a token is
// the password, with the username or a fixed name.
func TestAMQPLogin(t *testing.T) {
	_, s, a := fakeBroker(t)
	a.Login("guest", "right-pw")
	ts := newTokenServer(t, "amqp-login-secret")
	for _, tc := range []struct {
		name      string
		cfg       Config
		vhost     string
		kind      error
		says      string
		user, pwd string // what the handshake sent
	}{
		{"wrong password", Config{Username: "guest", Password: "s3cret-pw"}, "/", ErrUnauthorized,
			`the broker refused the credentials (Exception (403)`, "guest", "s3cret-pw"},
		{"basic auth hint", Config{Username: "guest", Password: "s3cret-pw"}, "/", ErrUnauthorized,
			`Check username and password (user "guest")`, "guest", "s3cret-pw"},
		{"bearer token", Config{BearerToken: "tok-s3cret-pw"}, "/", ErrUnauthorized,
			"The token is sent as the AMQP password", "terraform-provider-queuey", "tok-s3cret-pw"},
		{"bearer token with a username", Config{Username: "svc", BearerToken: "tok-s3cret-pw"}, "/", ErrUnauthorized,
			"The token is sent as the AMQP password", "svc", "tok-s3cret-pw"},
		{"OAuth 2.0", Config{OAuth2: &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "amqp-login-secret"}},
			"/", ErrUnauthorized, "The token is sent as the AMQP password", "terraform-provider-queuey", "tok-1"},
		{"vhost refused", Config{Username: "guest", Password: "right-pw"}, "nowhere", ErrUnauthorized,
			"The user may not open a connection to this vhost: grant it access there", "guest", "right-pw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Endpoint, tc.cfg.AMQPEndpoint, tc.cfg.RetryBudget = s.URL, a.URL(), -1
			c, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			before := len(a.Logins())
			_, err = c.PurgeQueue(context.Background(), tc.vhost, "q")
			var ae *AMQPError
			if !errors.As(err, &ae) || !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.says) ||
				!strings.Contains(err.Error(), `connecting over AMQP to vhost "`+tc.vhost+`" at `+a.URL()) {
				t.Errorf("got %v, want an *AMQPError of kind %v saying %q", err, tc.kind, tc.says)
			}
			if strings.Contains(err.Error(), "s3cret-pw") {
				t.Errorf("the error shows the password: %v", err)
			}
			logins := a.Logins()
			if len(logins) != before+1 || logins[before] != [2]string{tc.user, tc.pwd} {
				t.Errorf("the handshake sent %v, want %s and %s", logins[before:], tc.user, tc.pwd)
			}
		})
	}
}

// A token endpoint that refuses the client fails the connection before it
// is dialled, with the token endpoint's error.
func TestAMQPTokenRefused(t *testing.T) {
	_, s, a := fakeBroker(t)
	ts := newTokenServer(t, "another-secret")
	c, err := New(Config{Endpoint: s.URL, AMQPEndpoint: a.URL(), RetryBudget: -1,
		OAuth2: &OAuth2Config{TokenURL: ts.URL, ClientID: "terraform", ClientSecret: "wrong-s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.PurgeQueue(context.Background(), "/", "q")
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrUnauthorized) || !strings.Contains(e.Op, `connecting over AMQP to vhost "/"`) {
		t.Errorf("got %#v, want the token endpoint's refusal as an *Error", err)
	}
	if len(a.Logins()) != 0 {
		t.Errorf("dialled without a token: %v", a.Logins())
	}
}

// A TLS port whose certificate the client does not trust says which
// settings to set; an AMQP URL derived from endpoint says so.
func TestAMQPDialHints(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	c := amqpClient(t, "amqps://"+strings.TrimPrefix(tlsSrv.URL, "https://"))
	_, err := c.PurgeQueue(context.Background(), "/", "q")
	if !errors.Is(err, ErrAMQPUnreachable) || !strings.Contains(err.Error(), "failed over a certificate: set cacert_file") ||
		!strings.Contains(err.Error(), "; set amqp_endpoint") || strings.Contains(err.Error(), "derived") {
		t.Errorf("an untrusted certificate: %v", err)
	}
	derived, err := New(Config{Endpoint: "http://" + brokertest.ClosedAddr(t), Username: "u", Password: "p"})
	if err != nil {
		t.Fatal(err)
	}
	err = derived.dialError(context.Background(), "connecting", errors.New("dial tcp: connection refused"), nil, false)
	if !errors.Is(err, ErrAMQPUnreachable) || !strings.Contains(err.Error(), "amqp_endpoint is not set, so this URL was derived from endpoint: set amqp_endpoint") {
		t.Errorf("a derived URL: %v", err)
	}
}

// amqpUser: the user whoami names, and whether its tags (a list, or a
// comma-separated string as RabbitMQ 3.x writes them) hold impersonator;
// without an answer, the username for basic auth, else nobody.
func TestAMQPUser(t *testing.T) {
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
			if user, imp := c.amqpUser(context.Background()); user != tc.user || imp != tc.imp {
				t.Errorf("got %q, %v; want %q, %v", user, imp, tc.user, tc.imp)
			}
		})
	}
}
