package broker

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/tlscause"
)

// The one request path, and how each of its failures becomes an *Error with a kind and a cause
// (errors.go): the refusals of the credentials are told apart in refusals.go, a wrong endpoint in
// endpoint.go.

// do is the one path of every management API call: it sends method on path (below /api/, escaped by
// the caller) with body as JSON, honours ctx through every attempt and pause, and decodes a success
// into out. Failures come back as *Error, classified once, with RabbitMQ's reason.
func (c *Client) do(ctx context.Context, op, method, path string, body, out any) error {
	if method != http.MethodGet {
		// Shared reads begun before this write must not answer the reads after it.
		defer c.wrote()
	}
	return c.send(ctx, op, method, path, body, out)
}

// send is do without telling the shared reads of a write, for a caller that tells them itself.
func (c *Client) send(ctx context.Context, op, method, path string, body, out any) error {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return &Error{Op: op, Endpoint: c.endpoint, Reason: err.Error()}
		}
	}
	req, err := c.newRequest(ctx, method, path, b)
	if err != nil {
		return &Error{Op: op, Endpoint: c.endpoint, Reason: err.Error()}
	}
	if c.credentialsRefused.Load() {
		return c.refusedBefore(op)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if method != http.MethodGet {
			return c.writeFailed(ctx, op, err)
		}
		return c.unreachable(op, err)
	}
	defer func() {
		// Drain what the decoder left so that net/http keeps the connection (beyond bodyPeek, close
		// it).
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, bodyPeek))
		_ = resp.Body.Close()
	}()
	if resp.StatusCode >= 400 {
		return c.classify(ctx, op, resp.StatusCode, readReason(resp.Body))
	}
	if out == nil {
		return nil
	}
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return &Error{Op: op, Endpoint: c.endpoint, Status: resp.StatusCode, Reason: "unreadable answer: " + err.Error()}
	}
	return nil
}

// getJSON reads path into out through do.
func (c *Client) getJSON(ctx context.Context, op, path string, out any) error {
	return c.do(ctx, op, http.MethodGet, path, nil, out)
}

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

// unreachable turns a request without an answer into an *Error: a token that could not be had, an
// endpoint that speaks another protocol or scheme, nothing answering at first contact, a refused
// certificate, or no answer within the budget.
func (c *Client) unreachable(op string, err error) error {
	if e := c.authError(op, err); e != nil {
		return e
	}
	if e := c.endpointMismatch(op, err); e != nil {
		return e
	}
	e := &Error{Op: op, Endpoint: c.endpoint, Reason: transportReason(err), Kind: ErrUnreachable, Cause: CauseNoAnswer,
		Err: transportCause(err)}
	var fc *firstContactError
	if errors.As(err, &fc) {
		e.Reason, e.Cause, e.Addr, e.Unresolved = fc.Error(), CauseFirstContact, fc.Addr, fc.Unresolved()
	} else if tlscause.CertificateRefused(err) {
		e.Cause = CauseCertificate
	}
	return e
}

// writeFailed turns a failed write into an *Error. A write with no answer in time is most often one
// the metadata store could not commit: when most nodes are down, the error says so
// (ErrUnavailable).
func (c *Client) writeFailed(ctx context.Context, op string, err error) error {
	var na *NoAnswerError
	if errors.As(err, &na) && ctx.Err() == nil {
		if down, total := c.nodesDown(ctx); total > 0 && 2*len(down) >= total {
			return &Error{Op: op, Endpoint: c.endpoint, Reason: transportReason(err), Kind: ErrUnavailable, Cause: CauseNoMajority,
				NodesDown: down, Nodes: total, Err: transportCause(err)}
		}
	}
	return c.unreachable(op, err)
}

// nodesDown asks once for the nodes not running and the node count (0: it cannot tell).
func (c *Client) nodesDown(ctx context.Context) ([]string, int) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var nodes []struct {
		Name    string `json:"name"`
		Running bool   `json:"running"`
	}
	if err := c.getJSON(ctx, "reading cluster nodes", "nodes?columns=name,running", &nodes); err != nil {
		return nil, 0
	}
	var down []string
	for _, n := range nodes {
		if !n.Running {
			down = append(down, n.Name)
		}
	}
	return down, len(nodes)
}

// transportReason is a transport error's cause without net/http's method and URL.
func transportReason(err error) string {
	return transportCause(err).Error()
}

// transportCause is a transport error without net/http's *url.Error around it.
func transportCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
