package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
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

// classify picks the kind and cause of an HTTP failure. A 401 or 403 is told apart by its fix
// (credentials, tags, vhost access, permissions): the reason is matched against every spelling
// RabbitMQ versions use, and an unknown one is settled by asking /api/whoami (authProblem).
func (c *Client) classify(ctx context.Context, op string, status int, reason string) *Error {
	e := &Error{Op: op, Endpoint: c.endpoint, Status: status, Reason: reason}
	lower := strings.ToLower(reason)
	if status == 401 || status == 403 {
		e.Kind = ErrUnauthorized
		if c.cfg.authKind() != authBasic {
			c.tokenRefusal(e, reason)
			return e
		}
		problem := c.authProblem(ctx, status, reason)
		e.Cause, e.User = authCauses[problem], c.cfg.Username
		if problem == authCredentials {
			e.CredentialsRefused = true
			c.credentialsRefused.Store(true)
		}
		return e
	}
	if metadataStoreTimeout(lower) {
		e.Kind, e.Cause = ErrUnavailable, CauseMetadataStore
		return e
	}
	if queueProcessDown(lower) {
		e.Kind, e.Cause = ErrUnavailable, CauseNodeDown
		return e
	}
	if status == 404 {
		e.Kind = ErrNotFound
	} else if status == 400 && reason == "" && ctx != nil {
		c.notAPI(ctx, e)
	} else if strings.Contains(lower, "inequivalent arg") || strings.Contains(lower, "precondition_failed") {
		e.Kind = ErrArgumentsConflict
	} else if strings.Contains(lower, "not empty") || strings.Contains(lower, "in use") {
		e.Kind = ErrNotEmpty
	}
	return e
}

type authProblemKind int

const (
	authCredentials authProblemKind = iota // wrong username or password
	authTag                                // no management (or administrator) tag
	authVhost                              // no access to the vhost
	authPermissions                        // configure/write/read patterns do not cover the queue
)

// Reasons RabbitMQ gives, lower case, by meaning (4.3 answers 404 for no vhost access).
var authReasons = []struct {
	substr string
	kind   authProblemKind
}{
	{"login failed", authCredentials},
	{"not_authorized", authCredentials},
	{"invalid credentials", authCredentials},
	{"bad credentials", authCredentials},
	{"not management user", authTag},
	{"not administrator user", authTag},
	{"not monitor user", authTag},
	{"not policymaker user", authTag},
	{"virtual host", authVhost},
	{"vhost", authVhost},
	{"access refused", authPermissions},
	{"access_refused", authPermissions},
}

// authProblem says what a 401 or 403 is about: from a known reason, else from GET /api/whoami with
// the same credentials (answered: a permission is missing; refused for a tag: the tag; else: the
// credentials).
func (c *Client) authProblem(ctx context.Context, status int, reason string) authProblemKind {
	lower := strings.ToLower(reason)
	for _, r := range authReasons {
		if strings.Contains(lower, r.substr) {
			return r.kind
		}
	}
	whoStatus, whoReason := c.whoami(ctx)
	if whoStatus >= 200 && whoStatus < 300 {
		return authPermissions
	}
	if whoStatus == 401 || whoStatus == 403 {
		if strings.Contains(strings.ToLower(whoReason), " user") && !strings.Contains(strings.ToLower(whoReason), "login") {
			return authTag // "Not management user"
		}
		return authCredentials
	}
	if status == 403 {
		return authPermissions
	}
	return authCredentials
}

func (c *Client) whoami(ctx context.Context) (int, string) {
	if ctx == nil {
		ctx = context.Background()
	}
	// Not through do: the raw status is the answer, and do would classify it.
	req, err := c.newRequest(ctx, http.MethodGet, "whoami", nil)
	if err != nil {
		return 0, ""
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, ""
	}
	defer func() { _ = resp.Body.Close() }()
	return resp.StatusCode, readReason(resp.Body)
}

func readReason(r io.Reader) string {
	var body rabbithole.ErrorResponse
	_ = json.NewDecoder(io.LimitReader(r, bodyPeek)).Decode(&body)
	if body.Reason != "" {
		return body.Reason
	}
	return body.Message
}

// authCauses are the causes of the problems a 401 or 403 to basic auth is about.
var authCauses = map[authProblemKind]Cause{
	authCredentials: CauseCredentials,
	authTag:         CauseManagementTag,
	authVhost:       CauseVhostAccess,
	authPermissions: CausePermissions,
}

// refusedBefore is the error of a request not sent: this client's credentials were refused before.
func (c *Client) refusedBefore(op string) *Error {
	return &Error{Op: op, Endpoint: c.endpoint, Reason: "not sent, since an earlier request had the credentials refused",
		Kind: ErrUnauthorized, CredentialsRefused: true, Cause: CauseCredentials, User: c.cfg.Username}
}
