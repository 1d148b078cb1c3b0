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
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// The AMQP URL: amqp_endpoint as given (the scheme's port when it has none),
// else endpoint's host with 5672 for http and 5671 for https; never the
// credentials, whatever way they were given.
func TestAMQPEndpointDerivation(t *testing.T) {
	for _, tc := range []struct {
		endpoint, amqpEndpoint, want string
	}{
		{"http://127.0.0.1:15672", "", "amqp://127.0.0.1:5672"},
		{"http://rabbit.example.com:15672/", "", "amqp://rabbit.example.com:5672"},
		{"https://rabbit.example.com", "", "amqps://rabbit.example.com:5671"},
		{"https://rabbit.example.com:443/rabbitmq/", "", "amqps://rabbit.example.com:5671"},
		{"http://[::1]:15672", "", "amqp://[::1]:5672"},
		{"http://user:secret@127.0.0.1:15672", "", "amqp://127.0.0.1:5672"},
		{"http://127.0.0.1:15672", "amqp://10.0.0.7:5673", "amqp://10.0.0.7:5673"},
		{"http://127.0.0.1:15672", "amqps://mq.example.com", "amqps://mq.example.com:5671"},
		{"https://127.0.0.1:15671", "amqp://127.0.0.1", "amqp://127.0.0.1:5672"},
	} {
		c, err := New(Config{Endpoint: tc.endpoint, AMQPEndpoint: tc.amqpEndpoint, Username: "u", Password: "secret"})
		if err != nil {
			t.Fatalf("%s + %q: %v", tc.endpoint, tc.amqpEndpoint, err)
		}
		if got := c.AMQPEndpoint(); got != tc.want {
			t.Errorf("endpoint %s, amqp_endpoint %q: AMQP URL %s, want %s", tc.endpoint, tc.amqpEndpoint, got, tc.want)
		}
	}
}

// An amqp_endpoint that is not an amqp(s) URL of a host alone is refused
// when the client is built, saying why, never echoing a password.
func TestAMQPEndpointValidation(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:5672":       `scheme "http"`,
		"127.0.0.1:5672":              "amqp or amqps URL",
		"amqp://":                     "no host",
		"amqp://guest:secret@h:5672":  "without credentials",
		"amqp://h:5672/%2F":           "without a path",
		"amqp://h:5672?heartbeat=10":  "without a path or query",
		"amqps://h:5671/vhost#x":      "without a path",
		"amqp://user:secret@h/%2Fx?q": "without credentials",
	} {
		_, err := New(Config{Endpoint: "http://127.0.0.1:15672", AMQPEndpoint: raw, Username: "u", Password: "p"})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "amqp_endpoint") {
			t.Errorf("amqp_endpoint %q: %v, want an error with %q", raw, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("amqp_endpoint %q: the error shows the password: %v", raw, err)
		}
	}
}

// amqpClient is a client whose AMQP URL is u.
func amqpClient(t *testing.T, u string) *Client {
	t.Helper()
	c, err := New(Config{Endpoint: "http://127.0.0.1:1", AMQPEndpoint: u, Username: "guest", Password: "s3cret-pw"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A closed port, a port that speaks HTTP, TLS where plain AMQP is expected
// and plain AMQP where TLS is: each fails at once with its kind, naming the
// URL and amqp_endpoint, never the password.
func TestAMQPDialMistakes(t *testing.T) {
	closed := brokertest.ClosedAddr(t)
	// The management port (an HTTP server that answers what it cannot
	// parse), a TLS port as Erlang's ssl answers plain bytes (an alert),
	// and one that closes without a word, as Go's does.
	httpPort := brokertest.RawListener(t, "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
	tlsAlert := brokertest.RawListener(t, "\x15\x03\x03\x00\x02\x02\x46")
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	plainAMQP := brokertest.RawListener(t, brokertest.AMQPGreeting)
	for _, tc := range []struct {
		name, url string
		kind      error
		says      string
	}{
		{"closed port", "amqp://" + closed, ErrAMQPUnreachable, "connection refused"},
		{"HTTP port", "amqp://" + httpPort, ErrNotAMQP, "speaks HTTP"},
		{"TLS port, amqp://", "amqp://" + tlsAlert, ErrWrongScheme, "Use amqps://"},
		{"silent TLS port, amqp://", "amqp://" + strings.TrimPrefix(tlsSrv.URL, "https://"), ErrAMQPUnreachable, "use amqps://"},
		{"plain port, amqps://", "amqps://" + plainAMQP, ErrWrongScheme, "Use amqp://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := amqpClient(t, tc.url)
			start := time.Now()
			_, err := c.PurgeQueue(context.Background(), "/", "orders.dead")
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("took %s", took)
			}
			var ae *AMQPError
			if !errors.As(err, &ae) || !errors.Is(err, tc.kind) {
				t.Fatalf("got %v, want an *AMQPError of kind %v", err, tc.kind)
			}
			msg := err.Error()
			for _, want := range []string{tc.url, "amqp_endpoint", tc.says} {
				if !strings.Contains(msg, want) {
					t.Errorf("error lacks %q: %s", want, msg)
				}
			}
			if strings.Contains(msg, "s3cret-pw") {
				t.Errorf("error shows the password: %s", msg)
			}
		})
	}
}

// A port that accepts and never answers fails within the dial timeout
// (15 s by default, not amqp091-go's 30 + 30 s), and an interrupt ends the
// wait at once.
func TestAMQPDialTimeout(t *testing.T) {
	t.Parallel()
	if AMQPDialTimeout != 15*time.Second {
		t.Errorf("AMQPDialTimeout = %s, want 15s", AMQPDialTimeout)
	}
	silent := brokertest.SilentListener(t)
	c := amqpClient(t, "amqp://"+silent)
	c.amqp.timeout = 500 * time.Millisecond
	start := time.Now()
	_, err := c.PurgeQueue(context.Background(), "/", "orders.dead")
	if took := time.Since(start); took < 400*time.Millisecond || took > 2*time.Second {
		t.Errorf("a silent port failed after %s, want the dial timeout of 500ms", took)
	}
	if !errors.Is(err, ErrAMQPUnreachable) || !strings.Contains(err.Error(), "no AMQP connection within 500ms") {
		t.Errorf("a silent port: %v", err)
	}

	c.amqp.timeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = c.PurgeQueue(ctx, "/", "orders.dead")
	if took := time.Since(start); took > 2*time.Second || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("an interrupted dial: %v after %s", err, took)
	}
}

// A refused AMQP login is ErrUnauthorized with what to check; a token goes
// as the password.
func TestAMQPCredentials(t *testing.T) {
	c, err := New(Config{Endpoint: "https://h", BearerToken: "tok-123"})
	if err != nil {
		t.Fatal(err)
	}
	user, pass, err := c.credentials(context.Background())
	if err != nil || pass != "tok-123" || user == "" {
		t.Errorf("bearer token: user %q, password %q, %v; want the token as the password", user, pass, err)
	}
	c, _ = New(Config{Endpoint: "https://h", Username: "ops", Password: "pw"})
	if user, pass, _ := c.credentials(context.Background()); user != "ops" || pass != "pw" {
		t.Errorf("basic auth: %q %q", user, pass)
	}
}

// An interrupt (a cancel, not a deadline the handshake already has) ends an
// AMQP handshake that the server never answers at once, not at the dial
// timeout.
func TestAMQPDialCancelled(t *testing.T) {
	t.Parallel()
	c := amqpClient(t, "amqp://"+brokertest.SilentListener(t))
	c.amqp.timeout = 10 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.PurgeQueue(ctx, "/", "orders.dead")
	if took := time.Since(start); took > 3*time.Second || !errors.Is(err, context.Canceled) {
		t.Errorf("an interrupted handshake: %v after %s, want context.Canceled at once", err, took)
	}
}
