package broker

import (
	"errors"
	"fmt"
	"strings"
)

// Kinds of failure callers act on. Test with errors.Is.
var (
	// ErrNotFound: the vhost or queue does not exist.
	ErrNotFound = errors.New("not found")
	// ErrArgumentsConflict: the queue exists with other arguments or flags
	// (PRECONDITION_FAILED, "inequivalent arg").
	ErrArgumentsConflict = errors.New("queue exists with different arguments")
	// ErrNotEmpty: a guarded delete was refused because the queue holds
	// messages or has consumers.
	ErrNotEmpty = errors.New("queue not empty or in use")
	// ErrUnauthorized: the credentials were refused (401) or lack permission (403).
	ErrUnauthorized = errors.New("not authorized")
	// ErrUnreachable: no answer within the retry budget.
	ErrUnreachable = errors.New("management API unreachable")
	// ErrUnavailable: the broker answered, but the cluster cannot do it now:
	// the node of the queue is down, or the metadata store has no quorum.
	ErrUnavailable = errors.New("cluster unavailable")
)

// Error is a failed management API call.
type Error struct {
	// Op says what was being done, e.g. `declaring queue "orders" in vhost "/"`.
	Op string
	// Endpoint is the management API base URL, without credentials.
	Endpoint string
	// Status is the HTTP status, or 0 when there was no answer.
	Status int
	// Reason is the broker's explanation, or the transport error.
	Reason string
	// Kind is one of the Err* values, or nil.
	Kind error
	// Hint says what to do next.
	Hint string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(" at ")
	b.WriteString(e.Endpoint)
	switch {
	case e.Status != 0:
		fmt.Fprintf(&b, " failed: HTTP %d", e.Status)
		if e.Reason != "" {
			b.WriteString(": ")
			b.WriteString(strings.TrimSuffix(e.Reason, "."))
		}
	default:
		b.WriteString(" failed: ")
		b.WriteString(e.Reason)
	}
	if e.Hint != "" {
		b.WriteString(". ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap lets errors.Is see the kind.
func (e *Error) Unwrap() error { return e.Kind }

// classify picks the kind and hint of an HTTP failure.
func (c *Client) classify(op string, status int, reason string) *Error {
	e := &Error{Op: op, Endpoint: c.endpointRedacted, Status: status, Reason: reason}
	lower := strings.ToLower(reason)
	switch {
	case (status == 401 || status == 403) && c.cfg.Method() != AuthBasic:
		e.Kind = ErrUnauthorized
		e.Hint = c.tokenRefusalHint(reason)
	case status == 401 && (reason == "" || strings.Contains(lower, "login failed")):
		e.Kind = ErrUnauthorized
		e.Hint = fmt.Sprintf("Authentication failed for user %q: check username and password (or %s and %s)",
			c.cfg.Username, "RABBITMQ_USERNAME", "RABBITMQ_PASSWORD")
	case status == 401 || status == 403:
		// RabbitMQ answers 401, not 403, to a user it knows but does not
		// allow: "Not management user", "Access refused.", ...
		e.Kind = ErrUnauthorized
		e.Hint = fmt.Sprintf("User %q lacks permission for this: it needs the management (or administrator) tag and configure, write and read permissions on the vhost", c.cfg.Username)
	case MetadataStoreTimeout(lower):
		e.Kind = ErrUnavailable
		e.Hint = "The cluster's metadata store did not answer in time: most likely a majority of the cluster's nodes is down or " +
			"cannot reach each other, and nothing can be declared or deleted until it is back (check `rabbitmqctl cluster_status`)"
	case QueueProcessDown(lower):
		e.Kind = ErrUnavailable
		e.Hint = "The queue's node is down or restarting: bring it back (check `rabbitmqctl cluster_status`), then try again"
	case status == 404:
		e.Kind = ErrNotFound
	case strings.Contains(lower, "inequivalent arg") || strings.Contains(lower, "precondition_failed"):
		e.Kind = ErrArgumentsConflict
	case strings.Contains(lower, "not empty") || strings.Contains(lower, "in use"):
		e.Kind = ErrNotEmpty
	}
	return e
}
