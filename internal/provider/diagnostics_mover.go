package provider

import (
	"errors"
	"fmt"

	"github.com/queuey/terraform-provider-queuey/internal/mover"
)

// The wording of the mover's typed errors: the provider settings it names and the next step.

// moverText is the text of a failed move or purge: the error, then what to do next when its cause
// says.
func moverText(err error) string {
	var me *mover.MoveError
	var e *mover.Error
	step := ""
	if errors.As(err, &me) {
		step = moveNextStep(me)
	} else if errors.As(err, &e) {
		step = moverNextStep(e)
	}
	if step == "" {
		return err.Error()
	}
	return err.Error() + ". " + step
}

// amqpDetail is the detail of a failed move, purge or AMQP connection that no wrapper has worded
// yet: moverText, then what was not done or which setting to check; false for any other error.
func amqpDetail(err error) (string, bool) {
	if _, worded := errors.AsType[*wordedMoverError](err); worded {
		return "", false
	}
	_, isMove := errors.AsType[*mover.MoveError](err)
	e, isErr := errors.AsType[*mover.Error](err)
	switch {
	case isErr && e.Connecting:
		return moverText(err) + " (provider setting amqp_endpoint).", true
	case errors.Is(err, mover.ErrNotFound):
		return moverText(err) + ". Nothing was moved or deleted.", true
	case isMove || isErr:
		return moverText(err), true
	}
	return "", false
}

// wordedMoverError is a mover error whose text is moverText's; errors.Is and As see the error.
type wordedMoverError struct{ err error }

func (w *wordedMoverError) Error() string { return moverText(w.err) }
func (w *wordedMoverError) Unwrap() error { return w.err }

// withNextStep gives err, a failed move's, the provider's words for what to do next.
func withNextStep(err error) error {
	if err == nil {
		return nil
	}
	return &wordedMoverError{err: err}
}

const (
	amqpPermissionStep = "The user lacks a permission on the queue: consuming and purging need read on it, publishing write on " +
		"amq.default (the topology's queues_pattern and write_pattern cover both)"
	amqpVhostStep = "The user may not open a connection to this vhost: grant it access there (`rabbitmqctl set_permissions`)"
	amqpTokenStep = "The token is sent as the AMQP password: check that it is valid for this broker and grants access to the vhost"
)

// moverNextStep says what to do about a failed AMQP connection or channel operation: the
// credentials, the permissions, or amqp_endpoint (and that it was derived from endpoint when it
// was); "" when the kind says it all.
func moverNextStep(e *mover.Error) string {
	setting := "set amqp_endpoint (or RABBITMQ_AMQP_ENDPOINT) to RabbitMQ's AMQP listener, e.g. amqp://HOST:5672 or amqps://HOST:5671"
	if e.Derived {
		setting = "amqp_endpoint is not set, so this URL was derived from endpoint: " + setting
	}
	switch e.Cause {
	case mover.CredentialsRefused:
		if e.TokenAuth {
			return amqpTokenStep
		}
		return fmt.Sprintf("Check username and password (user %q): the AMQP connection uses the management API's credentials", e.User)
	case mover.VhostRefused:
		return amqpVhostStep
	case mover.QueuePermission:
		return amqpPermissionStep
	case mover.CertificateRefused:
		return "The TLS handshake failed over a certificate: set cacert_file to the CA that signed the broker's certificate " +
			"(insecure = true skips that check); " + setting
	case mover.NoAnswer:
		return "Check that RabbitMQ's AMQP listener answers there and that nothing blocks the port; " + setting
	case mover.ClosedUnanswered:
		return "If the port is a TLS listener, use amqps:// (usually port 5671); " + setting
	case mover.TLSPortPlainURL:
		return "Use amqps:// for a TLS listener (usually port 5671); " + setting
	case mover.PlainPortTLSURL:
		return "Use amqp:// for a plain listener (usually port 5672); " + setting
	case mover.OtherProtocol:
		return setting
	}
	return ""
}

// moveNextStep says what to do about a move that stopped; a move that failed before its first
// delivery carries the cause of its channel's error.
func moveNextStep(e *mover.MoveError) string {
	const again = "Invoke again once the broker answers: it moves what is left"
	switch e.Cause {
	case mover.Nacked:
		return "Check the broker's log (a full disk, a queue length limit with reject-publish)"
	case mover.ConfirmsStalled:
		return "The broker stopped answering: the network to it may be down without the connection closing, or the broker " +
			"is blocked (a memory or disk alarm). " + again
	case mover.DeliveriesStalled:
		return "Another consumer may be taking the messages of " + e.From + ", the broker may be blocked (a memory or disk " +
			"alarm), or the network to it down without the connection closing"
	case mover.ForeignUserID:
		return "Give the user the impersonator tag (rabbitmqctl set_user_tags USER impersonator, with its other tags), or move " +
			"that message by hand, then invoke again"
	case mover.DestinationGone:
		return "Declare " + e.To + " again (apply the queuey_queue), then invoke again"
	case mover.ConnectionLost:
		return again
	}
	return moverNextStep(&mover.Error{Cause: e.Cause})
}

// amqpEndpointText says what is wrong with an amqp_endpoint.
func amqpEndpointText(err error) string {
	const want = "amqp_endpoint must be an amqp or amqps URL such as amqp://127.0.0.1:5672"
	var e *mover.EndpointError
	if !errors.As(err, &e) {
		return err.Error()
	}
	switch e.Problem {
	case mover.NotAMQPScheme:
		return fmt.Sprintf("%s; %q has scheme %q", want, e.Value, e.Scheme)
	case mover.NoHost:
		return fmt.Sprintf("%s; %q has no host", want, e.Value)
	case mover.HasCredentials:
		return fmt.Sprintf("%s without credentials; %q has some: the AMQP connection authenticates with the provider's "+
			"username and password (or token), sent as SASL PLAIN", want, e.Value)
	case mover.HasPath:
		return fmt.Sprintf("%s without a path or query; got %q (the vhost comes from the action's vhost or the provider's)", want, e.Value)
	}
	return fmt.Sprintf("%s; %q does not parse", want, e.Value)
}
