package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/mover"
)

// Every cause of a failed connection or channel operation is worded with its setting or next
// step, the texts the provider has always shown.
func TestMoverNextStep(t *testing.T) {
	t.Parallel()
	const setting = "set amqp_endpoint (or RABBITMQ_AMQP_ENDPOINT) to RabbitMQ's AMQP listener, e.g. amqp://HOST:5672 or " +
		"amqps://HOST:5671"
	for _, tc := range []struct {
		e    mover.Error
		want string
	}{
		{mover.Error{}, ""},
		{mover.Error{Cause: mover.CredentialsRefused, User: "guest"},
			`Check username and password (user "guest"): the AMQP connection uses the management API's credentials`},
		{mover.Error{Cause: mover.CredentialsRefused, User: "svc", TokenAuth: true},
			"The token is sent as the AMQP password: check that it is valid for this broker and grants access to the vhost"},
		{mover.Error{Cause: mover.VhostRefused},
			"The user may not open a connection to this vhost: grant it access there (`rabbitmqctl set_permissions`)"},
		{mover.Error{Cause: mover.QueuePermission}, "The user lacks a permission on the queue: consuming and purging need read " +
			"on it, publishing write on amq.default (the topology's queues_pattern and write_pattern cover both)"},
		{mover.Error{Cause: mover.CertificateRefused}, "The TLS handshake failed over a certificate: set cacert_file to the CA " +
			"that signed the broker's certificate (insecure = true skips that check); " + setting},
		{mover.Error{Cause: mover.NoAnswer}, "Check that RabbitMQ's AMQP listener answers there and that nothing blocks the port; " + setting},
		{mover.Error{Cause: mover.NoAnswer, Derived: true}, "Check that RabbitMQ's AMQP listener answers there and that nothing " +
			"blocks the port; amqp_endpoint is not set, so this URL was derived from endpoint: " + setting},
		{mover.Error{Cause: mover.ClosedUnanswered}, "If the port is a TLS listener, use amqps:// (usually port 5671); " + setting},
		{mover.Error{Cause: mover.TLSPortPlainURL}, "Use amqps:// for a TLS listener (usually port 5671); " + setting},
		{mover.Error{Cause: mover.PlainPortTLSURL}, "Use amqp:// for a plain listener (usually port 5672); " + setting},
		{mover.Error{Cause: mover.OtherProtocol}, setting},
		{mover.Error{Cause: mover.OtherProtocol, Derived: true}, "amqp_endpoint is not set, so this URL was derived from endpoint: " + setting},
	} {
		if got := moverNextStep(&tc.e); got != tc.want {
			t.Errorf("cause %d (derived %v): %q,\nwant %q", tc.e.Cause, tc.e.Derived, got, tc.want)
		}
	}
}

// Every cause of a stopped move is worded with its next step; a move that failed before its first
// delivery takes its channel error's.
func TestMoveNextStep(t *testing.T) {
	t.Parallel()
	const again = "Invoke again once the broker answers: it moves what is left"
	for _, tc := range []struct {
		cause mover.Cause
		want  string
	}{
		{0, ""}, // no cause
		{mover.Nacked, "Check the broker's log (a full disk, a queue length limit with reject-publish)"},
		{mover.ConfirmsStalled, "The broker stopped answering: the network to it may be down without the connection closing, or " +
			"the broker is blocked (a memory or disk alarm). " + again},
		{mover.DeliveriesStalled, "Another consumer may be taking the messages of q.dead, the broker may be blocked (a memory or " +
			"disk alarm), or the network to it down without the connection closing"},
		{mover.ForeignUserID, "Give the user the impersonator tag (rabbitmqctl set_user_tags USER impersonator, with its other " +
			"tags), or move that message by hand, then invoke again"},
		{mover.DestinationGone, "Declare q again (apply the queuey_queue), then invoke again"},
		{mover.ConnectionLost, again},
		{mover.QueuePermission, amqpPermissionStep},
	} {
		if got := moveNextStep(&mover.MoveError{Vhost: "/", From: "q.dead", To: "q", Cause: tc.cause}); got != tc.want {
			t.Errorf("cause %d: %q,\nwant %q", tc.cause, got, tc.want)
		}
	}
}

// moverText is the error, then its next step when there is one; through a wrap too, and
// withNextStep keeps the error for errors.Is.
func TestMoverText(t *testing.T) {
	t.Parallel()
	e := &mover.Error{Op: "purging", URL: "amqp://h:5672", Reason: "ACCESS_REFUSED.", Kind: mover.ErrUnauthorized, Cause: mover.QueuePermission}
	want := "purging at amqp://h:5672 failed: ACCESS_REFUSED. " + amqpPermissionStep
	if got := moverText(fmt.Errorf("wrapped: %w", e)); got != "wrapped: purging at amqp://h:5672 failed: ACCESS_REFUSED. "+amqpPermissionStep {
		t.Errorf("wrapped: %q", got)
	}
	w := withNextStep(e)
	if w.Error() != want || !errors.Is(w, mover.ErrUnauthorized) || withNextStep(nil) != nil {
		t.Errorf("withNextStep: %q (unauthorized %v)", w, errors.Is(w, mover.ErrUnauthorized))
	}
	me := &mover.MoveError{Vhost: "/", From: "a", To: "b", URL: "u", Total: 2, Reason: "x", Cause: mover.ConnectionLost}
	if got := moverText(me); !strings.HasSuffix(got, "once its copy on b is confirmed. Invoke again once the broker answers: it moves what is left") {
		t.Errorf("a move: %q", got)
	}
	if got := moverText(context.Canceled); got != context.Canceled.Error() {
		t.Errorf("another error: %q", got)
	}
}

// Every problem of an amqp_endpoint is worded with the setting's name.
func TestAMQPEndpointText(t *testing.T) {
	t.Parallel()
	const want = "amqp_endpoint must be an amqp or amqps URL such as amqp://127.0.0.1:5672"
	for raw, text := range map[string]string{
		"127.0.0.1:5672":             want + `; "127.0.0.1:5672" does not parse`,
		"http://127.0.0.1:5672":      want + `; "http://127.0.0.1:5672" has scheme "http"`,
		"amqp://":                    want + `; "amqp:" has no host`,
		"amqp://guest:secret@h:5672": want + ` without credentials; "amqp://guest:xxxxx@h:5672" has some: the AMQP connection authenticates with the provider's username and password (or token), sent as SASL PLAIN`,
		"amqp://h:5672/%2F":          want + ` without a path or query; got "amqp://h:5672/%2F" (the vhost comes from the action's vhost or the provider's)`,
	} {
		_, err := mover.ValidateEndpoint(raw)
		if got := amqpEndpointText(err); got != text {
			t.Errorf("%q: %q,\nwant %q", raw, got, text)
		}
	}
	if got := amqpEndpointText(errors.New("other")); got != "other" {
		t.Errorf("another error: %q", got)
	}
}
