package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

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
	Hint string
	// CredentialsRefused says the broker refused the username or password.
	CredentialsRefused bool
}

// Short is the error without its hint.
func (e *Error) Short() string {
	c := *e
	c.Hint = ""
	return c.Error()
}

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
	if e.Hint != "" {
		b.WriteString(". ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap lets errors.Is see the kind.
func (e *Error) Unwrap() error { return e.Kind }

// classify picks the kind and hint of an HTTP failure. A 401 or 403 is told apart by its fix
// (credentials, tags, vhost access, permissions): the reason is matched against every spelling
// RabbitMQ versions use, and an unknown one is settled by asking /api/whoami (authProblem).
func (c *Client) classify(ctx context.Context, op string, status int, reason string) *Error {
	e := &Error{Op: op, Endpoint: c.endpoint, Status: status, Reason: reason}
	lower := strings.ToLower(reason)
	if status == 401 || status == 403 {
		e.Kind = ErrUnauthorized
		if c.cfg.authKind() != authBasic {
			e.Hint = c.tokenRefusalHint(reason)
			return e
		}
		problem := c.authProblem(ctx, status, reason)
		e.Hint = c.authHint(problem)
		if problem == authCredentials {
			e.CredentialsRefused = true
			c.credentialsRefused.Store(true)
		}
		return e
	}
	if metadataStoreTimeout(lower) {
		e.Kind = ErrUnavailable
		e.Hint = "The cluster's metadata store did not answer in time: most likely a majority of the cluster's nodes is down or " +
			"cannot reach each other, and nothing can be declared or deleted until it is back (check `rabbitmqctl cluster_status`). " +
			"The declaration may still take effect once the majority is back"
		return e
	}
	if queueProcessDown(lower) {
		e.Kind = ErrUnavailable
		e.Hint = "The queue's node is down or restarting: bring it back (check `rabbitmqctl cluster_status`), then try again"
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

func (c *Client) authHint(k authProblemKind) string {
	u := c.cfg.Username
	switch k {
	case authTag:
		return fmt.Sprintf("User %q lacks permission for this: it needs the management (or administrator) tag, "+
			"e.g. `rabbitmqctl set_user_tags %s management`", u, u)
	case authVhost:
		return fmt.Sprintf("User %q lacks permission for this: it has no access to the vhost; grant it configure permission "+
			"there on the queues it manages (`rabbitmqctl set_permissions -p VHOST %s QUEUES_PATTERN '^$' '^$'`; write and "+
			"read are not needed)", u, u)
	case authPermissions:
		return fmt.Sprintf("User %q lacks permission for this: its configure permission in the vhost must match the "+
			"queues it declares and deletes (the resource's queues_pattern); write and read are not needed", u)
	}
	return fmt.Sprintf("Authentication failed for user %q: check username and password (or %s and %s)",
		u, "RABBITMQ_USERNAME", "RABBITMQ_PASSWORD")
}

// refusedBefore is the error of a request not sent: this client's credentials were refused before.
func (c *Client) refusedBefore(op string) *Error {
	return &Error{Op: op, Endpoint: c.endpoint, Reason: "not sent, since an earlier request had the credentials refused",
		Kind: ErrUnauthorized, CredentialsRefused: true, Hint: c.authHint(authCredentials)}
}
