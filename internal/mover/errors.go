package mover

import (
	"errors"
	"fmt"
	"strings"
)

// Kinds of failure, tested with errors.Is: every sentinel of the package is here. The exported
// ones are those a caller decides on; the others are told apart by Cause, and reach a caller
// in the error's text and as an ErrUnreachable where they are one.
var (
	// ErrUnreachable: no AMQP connection within the dial bound (dialTimeout).
	ErrUnreachable = errors.New("AMQP endpoint unreachable")
	// errCertificate: the TLS handshake failed over a certificate; also an ErrUnreachable.
	errCertificate = fmt.Errorf("TLS certificate not accepted: %w", ErrUnreachable)
	// errNotAMQP: the port answered with another protocol (e.g. HTTP).
	errNotAMQP = errors.New("endpoint does not speak AMQP")
	// ErrWrongScheme: the port speaks TLS and the URL is amqp://, or the other way round (Cause).
	ErrWrongScheme = errors.New("wrong URL scheme for the port")
	// ErrNotFound: the queue does not exist.
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized: the credentials, the vhost or a queue permission were refused (Cause).
	ErrUnauthorized = errors.New("not authorized")

	// Why a move stopped (MoveError.Kind), besides the kinds above and the context's errors.

	// errReturned: the broker returned a publish as unroutable (To is gone).
	errReturned = errors.New("message returned unroutable")
	// errNotConfirmed: a publish was nacked, or its channel closed before its confirm came, or no
	// confirm came in time.
	errNotConfirmed = errors.New("publish not confirmed")
	// errConnectionLost: the AMQP connection or a channel closed.
	errConnectionLost = errors.New("AMQP connection lost")
	// errForeignUser: a message carries a user_id other than the connecting user's, which
	// RabbitMQ refuses to publish without the impersonator tag.
	errForeignUser = errors.New("message published by another user")
)

// Cause says what went wrong, for the caller to say what to do next; the zero Cause says nothing
// more than the kind.
type Cause int

const (
	// noCause: nothing more to say than the kind (an interrupt, a missing queue).
	noCause Cause = iota
	// CredentialsRefused: the broker refused the user and password (or token) at login.
	CredentialsRefused
	// VhostRefused: the user may not open a connection to the vhost.
	VhostRefused
	// QueuePermission: the user lacks a permission on the queue (read to consume or purge, write
	// on the default exchange to publish).
	QueuePermission
	// CertificateRefused: the TLS handshake failed over the server's certificate.
	CertificateRefused
	// NoAnswer: the port refused the connection, or did not answer within the dial bound.
	NoAnswer
	// ClosedUnanswered: over amqp://, the port closed without answering the protocol header, as
	// a TLS port does.
	ClosedUnanswered
	// TLSPortPlainURL: the port speaks TLS and the URL is amqp:// (ErrWrongScheme).
	TLSPortPlainURL
	// PlainPortTLSURL: the port speaks plain AMQP and the URL is amqps:// (ErrWrongScheme).
	PlainPortTLSURL
	// OtherProtocol: the port speaks another protocol (errNotAMQP).
	OtherProtocol

	// Causes of a MoveError.

	// Nacked: the broker nacked a publish.
	Nacked
	// ConfirmsStalled: no confirm came within the stall bound.
	ConfirmsStalled
	// DeliveriesStalled: no delivery and no confirm came within the stall bound.
	DeliveriesStalled
	// ForeignUserID: a message's user_id is another user's (errForeignUser).
	ForeignUserID
	// DestinationGone: a publish was returned unroutable (errReturned).
	DestinationGone
	// ConnectionLost: the connection or a channel closed (errConnectionLost).
	ConnectionLost
)

// Error is a failed connection or channel operation.
type Error struct {
	// Op says what was being done.
	Op string
	// URL is the AMQP URL, without credentials.
	URL string
	// Derived says the URL was derived from the management API's (Config.Derived).
	Derived bool
	// Connecting says the connection was not opened (Op is the connection's).
	Connecting bool
	// Kind is one of the package's sentinels (errCertificate is also an ErrUnreachable), the
	// context's error, or nil.
	Kind   error
	Reason string
	Cause  Cause
	// User is the user the login sent; TokenAuth says its password was a token.
	User      string
	TokenAuth bool
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s at %s failed: %s", e.Op, e.URL, strings.TrimSuffix(e.Reason, "."))
}

// Unwrap lets errors.Is see the kind.
func (e *Error) Unwrap() error { return e.Kind }

// MoveError is a move that stopped before it moved all it counted. Every message not confirmed is
// still on From (a duplicate on To is possible, a loss is not).
type MoveError struct {
	// Vhost, From and To are the move's.
	Vhost, From, To string
	URL             string
	Moved, Total    int
	Reason          string
	Kind            error
	Cause           Cause
}

func (e *MoveError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "moved %d of %d messages from %s to %s in vhost %q (%s), then stopped: %s. ", e.Moved, e.Total, e.From, e.To,
		e.Vhost, e.URL, strings.TrimSuffix(e.Reason, "."))
	fmt.Fprintf(&b, "The other %d stay on %s: a message leaves it only once its copy on %s is confirmed", e.Total-e.Moved, e.From, e.To)
	return b.String()
}

// Unwrap lets errors.Is see the kind.
func (e *MoveError) Unwrap() error { return e.Kind }

// EndpointProblem is what is wrong with an AMQP endpoint (EndpointError).
type EndpointProblem int

const (
	// unparsable: not a URL.
	unparsable EndpointProblem = iota + 1
	// NotAMQPScheme: a scheme other than amqp or amqps.
	NotAMQPScheme
	// NoHost: no host.
	NoHost
	// HasCredentials: a user (and password) in the URL.
	HasCredentials
	// HasPath: a path (vhost), query or fragment.
	HasPath
)

// EndpointError is an AMQP endpoint refused by ValidateEndpoint.
type EndpointError struct {
	// Value is the endpoint given, its password hidden.
	Value   string
	Scheme  string
	Problem EndpointProblem
}

func (e *EndpointError) Error() string {
	const want = "an AMQP endpoint must be an amqp or amqps URL of a host and port"
	switch e.Problem {
	case NotAMQPScheme:
		return fmt.Sprintf("%s; %q has scheme %q", want, e.Value, e.Scheme)
	case NoHost:
		return fmt.Sprintf("%s; %q has no host", want, e.Value)
	case HasCredentials:
		return fmt.Sprintf("%s, without credentials; %q has some", want, e.Value)
	case HasPath:
		return fmt.Sprintf("%s, without a path or query; got %q", want, e.Value)
	}
	return fmt.Sprintf("%s; %q does not parse", want, e.Value)
}
