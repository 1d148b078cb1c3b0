package broker

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/redact"
)

// Client talks to one management API.
type Client struct {
	cfg       Config
	endpoint  string  // normalised: no trailing slash, no credentials
	base      url.URL // endpoint parsed, for hints that suggest a corrected one
	http      *http.Client
	transport *retryTransport

	// Reads by vhost shared by concurrent callers (reads.go).
	declared  flight[map[string]Queue] // what each queue was declared with
	counted   flight[map[string]Queue] // the same, with message counts
	checks    flight[map[string]Queue] // message counts, states and nodes
	consumers flight[map[string]int64] // consumer counts by queue
	vhosts    flight[Vhost]
	policies  flight[policyRead] // a vhost's policies, read once (policies.go)
	version   flight[string]     // the broker's version, read once (version.go)
	// lastWrite is when (Unix ns) this client last wrote anything but a queue delete.
	lastWrite atomic.Int64

	// credentialsRefused is set once the broker refused the basic-auth credentials.
	credentialsRefused atomic.Bool

	nodeMu      sync.Mutex
	nodeDefault *string // the node's default queue type, once read ("" for none)

	// tlsConfig and tokens are the TLS settings and token source, shared with the AMQP mover
	// (amqp_access.go).
	tlsConfig *tls.Config
	tokens    *sharedToken
}

// wrote tells the shared reads that this client changed something.
func (c *Client) wrote() {
	c.lastWrite.Store(time.Now().UnixNano())
	c.declared.wrote()
	c.counted.wrote()
	c.checks.wrote()
	c.consumers.wrote()
}

// deletedQueue is wrote for a queue delete, which a destroy's checks may read past (reads.go).
func (c *Client) deletedQueue() {
	c.declared.wrote()
	c.counted.wrote()
	c.checks.deleted()
	c.consumers.deleted()
}

// New builds a client: it validates the settings and reads certificate files.
func New(cfg Config) (*Client, error) {
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	u, err := ValidateEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	if u.User != nil {
		// Credentials in the URL are taken unless username/password are set, and kept out of every
		// error.
		if cfg.Username == "" {
			cfg.Username = u.User.Username()
		}
		if p, ok := u.User.Password(); ok && cfg.Password == "" {
			cfg.Password = p
		}
		u.User = nil
	}
	endpoint := u.String()
	base, err := newBaseTransport(cfg)
	if err != nil {
		return nil, err
	}
	rt := newRetryTransport(base, cfg)
	auth, err := newAuthTransport(cfg, rt, tokenTransport(cfg, base))
	if err != nil {
		return nil, err
	}
	if err := checkCredentials(cfg); err != nil {
		return nil, err
	}
	// A backstop: every attempt already has its own timeout.
	overall := cfg.maxRequestTime() + cfg.RequestTimeout
	return &Client{
		cfg:       cfg,
		endpoint:  endpoint,
		base:      *u,
		http:      &http.Client{Transport: auth, Timeout: overall},
		transport: rt,
		tlsConfig: base.TLSClientConfig,
		tokens:    auth.tokens,
	}, nil
}

// Endpoint returns the normalised management API base URL, without credentials.
func (c *Client) Endpoint() string { return c.endpoint }

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
	} else if certificateError(err) {
		e.Cause = CauseCertificate
	}
	return e
}

// ValidateEndpoint checks a management API base URL: http or https, a host, no query or fragment.
func ValidateEndpoint(raw string) (*url.URL, error) {
	s := strings.TrimRight(strings.TrimSpace(raw), "/")
	u, err := url.Parse(s)
	if !strings.Contains(raw, "://") {
		return nil, fmt.Errorf("the endpoint must be an http or https URL such as http://127.0.0.1:15672; %q has no scheme: "+
			"write it as http://%s (or https:// for a TLS listener)", redact.URL(s), redact.URL(s))
	}
	if err != nil {
		return nil, fmt.Errorf("the endpoint must be an http or https URL such as http://127.0.0.1:15672; %q does not parse", redact.URL(s))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("the endpoint must be an http or https URL such as http://127.0.0.1:15672; %q has scheme %q", redact.URL(s), u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("the endpoint must be an http or https URL such as http://127.0.0.1:15672; %q has no host", redact.URL(s))
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, fmt.Errorf("the endpoint must be a base URL without a query or fragment; got %q", redact.URL(s))
	}
	return u, nil
}

// newRequest builds a request for path below /api/; the auth transport adds the credentials.
func (c *Client) newRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint+"/api/"+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

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

func (c *Client) getJSON(ctx context.Context, op, path string, out any) error {
	return c.do(ctx, op, http.MethodGet, path, nil, out)
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
