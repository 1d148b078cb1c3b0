package broker

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
)

// What a refusal of the credentials is about. A 401 or 403 to basic auth is told apart by its fix
// (the credentials, a tag, access to the vhost, a permission); one to a bearer token, by what the
// token lacks; a token that could not be had, by the token endpoint's answer.

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

// authCauses are the causes of the problems a 401 or 403 to basic auth is about.
var authCauses = map[authProblemKind]Cause{
	authCredentials: CauseCredentials,
	authTag:         CauseManagementTag,
	authVhost:       CauseVhostAccess,
	authPermissions: CausePermissions,
}

// whoami asks GET /api/whoami with the same credentials, and returns the status and reason.
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

// tokenRefusal completes e, a 401 or 403 to a request that carried a bearer token, with its cause.
func (c *Client) tokenRefusal(e *Error, reason string) {
	lower := strings.ToLower(reason)
	e.TokenFetched = c.cfg.authKind() == authOAuth2
	switch {
	case strings.Contains(lower, "not management user"):
		e.Cause = CauseTokenNoTag
	case strings.Contains(lower, "access refused"):
		e.Cause = CauseTokenNoPermission
	default:
		e.Cause = CauseTokenRefused
		if exp := jwtExpiry(c.cfg.BearerToken); !e.TokenFetched && !exp.IsZero() && time.Now().After(exp) {
			e.TokenExpiry = exp
		}
	}
}

// authError is the *Error of a request that could not get a token (a *TokenError), or nil.
func (c *Client) authError(op string, err error) *Error {
	var te *TokenError
	if !errors.As(err, &te) {
		return nil
	}
	kind := ErrUnauthorized
	if te.Status == 0 || te.Status >= 500 {
		kind = ErrTokenEndpoint // no answer, or a failing endpoint: no refusal
	}
	return &Error{Op: op, Endpoint: c.endpoint, Reason: te.Error(), Kind: kind, Cause: CauseTokenEndpoint, Err: te}
}

// refusedBefore is the error of a request not sent: this client's credentials were refused before.
func (c *Client) refusedBefore(op string) *Error {
	return &Error{Op: op, Endpoint: c.endpoint, Reason: "not sent, since an earlier request had the credentials refused",
		Kind: ErrUnauthorized, CredentialsRefused: true, Cause: CauseCredentials, User: c.cfg.Username}
}
