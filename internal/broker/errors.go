package broker

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kinds of failure callers act on, tested with errors.Is.
var (
	// ErrNotFound: the vhost or queue does not exist.
	ErrNotFound = errors.New("not found")
	// ErrArgumentsConflict: the queue exists with other arguments or flags.
	ErrArgumentsConflict = errors.New("queue exists with different arguments")
	// ErrNotEmpty: a guarded delete was refused: the queue holds messages or has consumers.
	ErrNotEmpty = errors.New("queue not empty or in use")
	// ErrUnauthorized: the credentials were refused (401) or lack permission (403).
	ErrUnauthorized = errors.New("not authorized")
	// ErrUnreachable: no answer within the retry budget.
	ErrUnreachable = errors.New("management API unreachable")
	// ErrUnavailable: the queue's node is down, or the metadata store has no quorum.
	ErrUnavailable = errors.New("cluster unavailable")
	// ErrTokenEndpoint: the OAuth 2.0 token endpoint did not answer, or failed, within the budget.
	ErrTokenEndpoint = errors.New("OAuth 2.0 token endpoint unreachable")
	// ErrNotListed: a KeptIfListed listing that has not answered yet.
	ErrNotListed = errors.New("the vhost's listing has not answered yet")
	// ErrPartial: one of a vhost's two policy listings was refused while the other answered.
	ErrPartial = errors.New("policies read in part")
)

// Endpoint mistakes: the endpoint answers, but not as the management API. Never retried.
var (
	// ErrNotHTTP: the endpoint's port speaks another protocol, e.g. AMQP.
	ErrNotHTTP = errors.New("endpoint does not speak HTTP")
	// ErrWrongScheme: http:// to a TLS port, or https:// to a plain one.
	ErrWrongScheme = errors.New("endpoint scheme does not match its port")
	// ErrNotAPI: the path is not the management API's base (RabbitMQ answers 400 without a reason).
	ErrNotAPI = errors.New("endpoint path is not the management API")
)

// Error is a failed management API call. It carries the facts of the failure and its Cause; what to
// do next is worded by the caller, which knows the names of its settings.
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
	// Cause is the kind of next step the failure calls for (CauseNone: none beyond the error).
	Cause Cause
	// CredentialsRefused says the broker refused the username or password.
	CredentialsRefused bool

	// User is the basic-auth username (the refusals of credentials, tags and permissions).
	User string
	// Vhost is the vhost the user cannot see (CauseVhostNotVisible).
	Vhost string
	// Addr is the host:port where nothing answered (CauseFirstContact); Unresolved says its host
	// did not resolve.
	Addr       string
	Unresolved bool
	// SuggestedURL is the endpoint to use instead (CauseWantHTTPS, CauseWantHTTP, CauseAPISuffix,
	// CauseAPIPath: there, the scheme and host only).
	SuggestedURL string
	// Path is the endpoint's path that is not the management API's (CauseAPIPath).
	Path string
	// NodesDown and Nodes are the cluster's nodes not running and its node count (CauseNoMajority).
	NodesDown []string
	Nodes     int
	// TokenFetched says the refused token came from the OAuth 2.0 grant, not a fixed bearer token;
	// TokenExpiry is when a fixed bearer token expired (zero: not known to be expired).
	TokenFetched bool
	TokenExpiry  time.Time
	// Err is the failure the Reason was read from: a *TokenError, *BudgetError, *NoAnswerError,
	// *firstContactError or transport error; nil for an answer. Not unwrapped: Kind is the error's
	// kind.
	Err error
}

// Cause is the kind of next step a failed call calls for.
type Cause int

const (
	CauseNone Cause = iota
	// CauseCredentials: the broker refused the username or password.
	CauseCredentials
	// CauseManagementTag: the user lacks the management (or administrator) tag.
	CauseManagementTag
	// CauseVhostAccess: the user has no access to the vhost.
	CauseVhostAccess
	// CausePermissions: the user's configure permission does not cover the queue.
	CausePermissions
	// CauseVhostNotVisible: the vhost is missing or the user has no permissions in it (404 to both).
	CauseVhostNotVisible
	// CauseTokenNoTag: the broker accepted the token, which carries no management tag.
	CauseTokenNoTag
	// CauseTokenNoPermission: the token lacks a permission on the vhost.
	CauseTokenNoPermission
	// CauseTokenRefused: the broker did not accept the token (TokenFetched, TokenExpiry).
	CauseTokenRefused
	// CauseTokenEndpoint: getting a token failed (Err is the *TokenError).
	CauseTokenEndpoint
	// CauseMetadataStore: the cluster's metadata store did not answer in time.
	CauseMetadataStore
	// CauseNodeDown: the queue's node is down or restarting.
	CauseNodeDown
	// CauseNoMajority: most of the cluster's nodes are not running (NodesDown, Nodes).
	CauseNoMajority
	// CauseNoAnswer: no usable answer from the endpoint.
	CauseNoAnswer
	// CauseCertificate: the TLS handshake failed over a certificate.
	CauseCertificate
	// CauseFirstContact: nothing has answered at Addr recently (Unresolved: its host did not resolve).
	CauseFirstContact
	// CauseAMQPPort: the endpoint is RabbitMQ's AMQP port.
	CauseAMQPPort
	// CauseNotHTTP: the endpoint's port speaks another protocol than HTTP.
	CauseNotHTTP
	// CauseWantHTTPS: the port speaks TLS to an http:// endpoint (SuggestedURL).
	CauseWantHTTPS
	// CauseWantHTTP: the port speaks plain HTTP to an https:// endpoint (SuggestedURL).
	CauseWantHTTP
	// CauseAPISuffix: the endpoint ends in /api (SuggestedURL).
	CauseAPISuffix
	// CauseAPIPath: the endpoint's Path is not the management API's (SuggestedURL: scheme and host).
	CauseAPIPath
	// CauseNotAPI: the server is not RabbitMQ's management API.
	CauseNotAPI
)

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(" at ")
	b.WriteString(e.Endpoint)
	if e.Status != 0 {
		fmt.Fprintf(&b, " failed: HTTP %d", e.Status)
		if e.Reason != "" {
			b.WriteString(": ")
			b.WriteString(strings.TrimSuffix(e.Reason, "."))
		}
	} else {
		b.WriteString(" failed: ")
		b.WriteString(e.Reason)
	}
	return b.String()
}

// Unwrap lets errors.Is see the kind.
func (e *Error) Unwrap() error { return e.Kind }
