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

// fastFail is how long an answer that can never succeed may take with the
// default request_timeout and retry_budget.
const fastFail = 2 * time.Second

// defaultClient is a client with the default request_timeout and retry_budget.
func defaultClient(t *testing.T, endpoint string) *Client {
	t.Helper()
	return mustNew(t, Config{Endpoint: endpoint, Username: "guest", Password: "guest"})
}

// Answers that can never succeed fail at once, with the kind, the cause and
// the fix, with the default settings.
func TestEndpointMistakesFailFast(t *testing.T) {
	amqp := brokertest.RawListener(t, brokertest.AMQPGreeting)
	tlsAlert := brokertest.RawListener(t, "\x15\x03\x03\x00\x02\x02\x46") // a TLS port's alert to plain HTTP, as Erlang's ssl sends
	// A TLS record of the handshake type (0x16) rather than an alert, and the
	// shortest answer that still shows a TLS record (type and major version).
	tlsHandshake := brokertest.RawListener(t, "\x16\x03\x01\x00\x00")
	tlsShortest := brokertest.RawListener(t, "\x15\x03")
	// The closed and raw ports of these tests are no management API at all,
	// so they are not the fake: RawListener answers as RabbitMQ's AMQP port
	// and a TLS port do to plain HTTP.
	tlsSrv := brokertest.NewTLS(t, nil)
	fake := brokertest.New(t)
	plain := fake
	for _, tc := range []struct {
		name     string
		endpoint string
		kind     error
		cause    Cause
		url      string // the endpoint suggested instead
		want     []string
	}{
		{"AMQP port over http", "http://" + amqp, ErrNotHTTP, CauseAMQPPort, "",
			[]string{`it answered "AMQP\x00\x00\t\x01"`}},
		{"AMQP port over https", "https://" + amqp, ErrNotHTTP, CauseAMQPPort, "",
			[]string{"does not speak TLS or HTTP"}},
		{"http to a TLS port (Go's 400)", strings.Replace(tlsSrv.URL, "https://", "http://", 1), ErrWrongScheme, CauseWantHTTPS,
			tlsSrv.URL, []string{"HTTP 400"}},
		{"http to a TLS port (an alert)", "http://" + tlsAlert, ErrWrongScheme, CauseWantHTTPS, "https://" + tlsAlert,
			[]string{"answered plain HTTP with TLS"}},
		{"http to a TLS port (a handshake record)", "http://" + tlsHandshake, ErrWrongScheme, CauseWantHTTPS, "https://" + tlsHandshake,
			[]string{"answered plain HTTP with TLS"}},
		{"http to a TLS port (two bytes of a record)", "http://" + tlsShortest, ErrWrongScheme, CauseWantHTTPS, "https://" + tlsShortest,
			[]string{"answered plain HTTP with TLS"}},
		{"https to a plain port", strings.Replace(plain.URL, "http://", "https://", 1), ErrWrongScheme, CauseWantHTTP, plain.URL,
			[]string{"answered the TLS handshake with plain HTTP"}},
		{"endpoint ending in /api", fake.URL + "/api", ErrNotAPI, CauseAPISuffix, fake.URL, []string{"HTTP 400"}},
		{"endpoint with another path", fake.URL + "/rabbit", ErrNotAPI, CauseAPIPath, fake.URL, []string{"HTTP 400"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaultClient(t, tc.endpoint)
			start := time.Now()
			_, err := c.GetVhost(context.Background(), "/")
			elapsed := time.Since(start)
			var e *Error
			if !errors.Is(err, tc.kind) || !errors.As(err, &e) || e.Cause != tc.cause || e.SuggestedURL != tc.url {
				t.Fatalf("got %#v, want %v with cause %d suggesting %q", err, tc.kind, tc.cause, tc.url)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if elapsed > fastFail {
				t.Errorf("took %s, want under %s", elapsed, fastFail)
			}
		})
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

// A 404 is "not there" at once, with the default retry budget, unless the
// client has just seen the broker fail as a restarting one does.
func TestNotFoundIsFinalWithDefaultBudget(t *testing.T) {
	fake := brokertest.New(t)
	fake.AddVhost("gone", "")
	for _, tc := range []struct {
		name string
		call func(*Client) error
	}{
		{"missing vhost", func(c *Client) error { _, err := c.GetVhost(context.Background(), "nope"); return err }},
		{"missing queue's delete", func(c *Client) error { return c.DeleteQueue(context.Background(), "/", "nope", true) }},
		{"deleted vhost's listing", func(c *Client) error {
			fake.RemoveVhost("gone")
			_, err := c.ListQueues(context.Background(), "gone", Counted, Live)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaultClient(t, fake.URL)
			start := time.Now()
			err := tc.call(c)
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("got %v, want ErrNotFound", err)
			}
			if elapsed := time.Since(start); elapsed > time.Second {
				t.Errorf("took %s, want under 1s", elapsed)
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
	c := defaultClient(t, fake.URL)
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
