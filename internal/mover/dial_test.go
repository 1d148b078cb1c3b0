package mover

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// A closed port, a port that speaks HTTP, TLS where plain AMQP is expected
// and plain AMQP where TLS is: each fails at once with its kind and cause,
// as a connection that did not open, naming the URL, never the password.
func TestDialMistakes(t *testing.T) {
	closed := brokertest.ClosedAddr(t)
	// The management port (an HTTP server that answers what it cannot
	// parse), a TLS port as Erlang's ssl answers plain bytes (an alert),
	// and one that closes without a word, as Go's does.
	httpPort := brokertest.RawListener(t, "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
	tlsAlert := brokertest.RawListener(t, "\x15\x03\x03\x00\x02\x02\x46")
	tlsSrv := brokertest.NewTLS(t, nil)
	plainAMQP := brokertest.RawListener(t, brokertest.AMQPGreeting)
	// A port that reads the AMQP header (8 bytes) and resets the connection without a word.
	resets, err := brokertest.NewFaultProxy(brokertest.SilentListener(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(resets.Close)
	resets.Arm(brokertest.Fault{Kind: brokertest.FaultReset, After: 8, All: true})
	for _, tc := range []struct {
		name, url string
		kind      error
		cause     Cause
		says      string
	}{
		{"closed port", "amqp://" + closed, ErrUnreachable, NoAnswer, "connection refused"},
		{"HTTP port", "amqp://" + httpPort, errNotAMQP, OtherProtocol, "speaks HTTP"},
		{"TLS port, amqp://", "amqp://" + tlsAlert, ErrWrongScheme, TLSPortPlainURL, "the port speaks TLS"},
		{"silent TLS port, amqp://", "amqp://" + strings.TrimPrefix(tlsSrv.URL, "https://"), ErrUnreachable, ClosedUnanswered,
			"closed the connection without answering"},
		{"plain port, amqps://", "amqps://" + plainAMQP, ErrWrongScheme, PlainPortTLSURL, "the port speaks plain AMQP"},
		{"reset without a word, amqp://", "amqp://" + resets.Addr, ErrUnreachable, ClosedUnanswered, "closed the connection without answering"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := moverAt(tc.url)
			start := time.Now()
			_, err := c.Purge(context.Background(), "/", "orders.dead")
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("took %s", took)
			}
			var ae *Error
			if !errors.As(err, &ae) || !errors.Is(err, tc.kind) || ae.Cause != tc.cause || !ae.Connecting || ae.Derived {
				t.Fatalf("got %#v, want an *Error of kind %v, cause %v, connecting", err, tc.kind, tc.cause)
			}
			msg := err.Error()
			for _, want := range []string{tc.url, tc.says} {
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
func TestDialTimeout(t *testing.T) {
	t.Parallel()
	if dialTimeout != 15*time.Second {
		t.Errorf("dialTimeout = %s, want 15s", dialTimeout)
	}
	silent := brokertest.SilentListener(t)
	c := moverAt("amqp://" + silent)
	c.timeout = 500 * time.Millisecond
	start := time.Now()
	_, err := c.Purge(context.Background(), "/", "orders.dead")
	if took := time.Since(start); took < 400*time.Millisecond || took > 2*time.Second {
		t.Errorf("a silent port failed after %s, want the dial timeout of 500ms", took)
	}
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "no AMQP connection within 500ms") {
		t.Errorf("a silent port: %v", err)
	}

	c.timeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = c.Purge(ctx, "/", "orders.dead")
	if took := time.Since(start); took > 2*time.Second || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("an interrupted dial: %v after %s", err, took)
	}
}

// An interrupt (a cancel, not a deadline the handshake already has) ends an
// AMQP handshake that the server never answers at once, not at the dial
// timeout.
func TestDialCancelled(t *testing.T) {
	t.Parallel()
	c := moverAt("amqp://" + brokertest.SilentListener(t))
	c.timeout = 10 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Purge(ctx, "/", "orders.dead")
	if took := time.Since(start); took > 3*time.Second || !errors.Is(err, context.Canceled) {
		t.Errorf("an interrupted handshake: %v after %s, want context.Canceled at once", err, took)
	}
}

// A Mover's bounds are the defaults: dialTimeout for connecting, defaultCloseWait for closing.
func TestDialDefaults(t *testing.T) {
	t.Parallel()
	m := New(Config{})
	if m.timeout != dialTimeout || m.closeWait != defaultCloseWait {
		t.Errorf("dial bound %s, close wait %s; want %s and %s", m.timeout, m.closeWait, dialTimeout, defaultCloseWait)
	}
}

// A connection has the dial bound (here 2s) for TCP, TLS and the handshake together: a port that
// answers just inside it is heard (here it answers HTTP, reported as such), one that answers just
// after it is reported as no AMQP connection within the bound.
func TestLimit_dial(t *testing.T) {
	t.Parallel()
	const bound = 2 * time.Second
	for _, tc := range []struct {
		name    string
		answers time.Duration
		want    error
	}{
		{"answers just inside", bound * 7 / 10, errNotAMQP},
		{"answers just outside", bound * 14 / 10, ErrUnreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := moverAt("amqp://" + brokertest.SlowListener(t, "HTTP/1.1 400 Bad Request\r\n\r\n", tc.answers))
			m.timeout = bound
			_, err := m.Purge(context.Background(), "/", "orders.dead")
			if !errors.Is(err, tc.want) {
				t.Fatalf("a port answering after %s, bound %s: got %v, want %v", tc.answers, bound, err, tc.want)
			}
			if tc.want == ErrUnreachable && !strings.Contains(err.Error(), "no AMQP connection within 2s") {
				t.Errorf("the error does not name the bound: %v", err)
			}
		})
	}
}

// amqp091-go dials an amqps:// URL as amqp:// to the same host and port (5671 when none is
// given), for the mover runs the TLS handshake itself; any other URL goes as it is.
func TestLibraryURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"amqps://broker.example":         "amqp://broker.example:5671",
		"amqps://broker.example:5999/vh": "amqp://broker.example:5999/vh",
		"amqps://[::1]":                  "amqp://[::1]:5671",
		"amqp://broker.example":          "amqp://broker.example",
		"amqp://broker.example:5672/vh":  "amqp://broker.example:5672/vh",
		"amqps://bad host\x7f:99999":     "amqps://bad host\x7f:99999",
	} {
		if got := moverAt(in).libraryURL(); got != want {
			t.Errorf("libraryURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// A TLS record begins with an alert or handshake type and major version 3: two bytes suffice.
func TestTLSRecord(t *testing.T) {
	t.Parallel()
	for b, want := range map[string]bool{"\x15\x03": true, "\x16\x03\x01": true, "\x15": false, "\x17\x03": false,
		"\x16\x02": false, "AMQP": false, "": false} {
		if got := tlsRecord([]byte(b)); got != want {
			t.Errorf("tlsRecord(%q) = %v, want %v", b, got, want)
		}
	}
}
