package broker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// fastFail is how long an answer that can never succeed may take with the
// default request_timeout and retry_budget.
const fastFail = 2 * time.Second

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
			c := mustNew(t, Config{Endpoint: tc.endpoint, Username: "guest", Password: "guest"}) // default limits
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

// A 400 without a reason at the management API's own root (no path) is a
// port that is not the management API.
func TestNotTheManagementAPI(t *testing.T) {
	s := brokertest.New(t)
	s.Script(nil, brokertest.Reply(400, ""))
	c := mustNew(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: -1})
	_, err := c.GetQueue(context.Background(), "/", "q", Declared)
	if !errors.Is(err, ErrNotAPI) || errOf(err).Cause != CauseNotAPI {
		t.Errorf("a 400 without a reason: %v", err)
	}
}
