package broker

import (
	"bytes"
	"context"
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
)

// Client talks to one management API.
type Client struct {
	cfg       Config
	endpoint  string // normalised: no trailing slash, no credentials
	http      *http.Client
	transport *retryTransport

	// Reads by vhost shared by concurrent callers (see reads.go).
	declared  flight[map[string]Queue] // what each queue was declared with
	counted   flight[map[string]Queue] // the same, with message counts
	checks    flight[map[string]Queue] // message counts, states and nodes
	consumers flight[map[string]int64] // consumer counts by queue
	vhosts    flight[Vhost]
	// lastWrite is when this client last wrote anything but a queue delete
	// (Unix nanoseconds; see CountsAsRecent).
	lastWrite atomic.Int64

	// credentialsRefused is set once the broker refused the basic-auth
	// credentials: later requests are not sent (see refusedBefore).
	credentialsRefused atomic.Bool

	nodeMu      sync.Mutex
	nodeDefault *string // the node's default queue type, once read ("" for none)

	amqp amqpSettings // the AMQP 0-9-1 connection (amqp.go)
}

// wrote tells the shared queue reads that this client changed something:
// none of them answers a later caller with what it read before.
func (c *Client) wrote() {
	c.lastWrite.Store(time.Now().UnixNano())
	c.declared.wrote()
	c.counted.wrote()
	c.checks.wrote()
	c.consumers.wrote()
}

// deletedQueue is wrote for a queue delete, after which the checks before a
// destroy may still take a listing asked before it (see reads.go): with ten
// destroys at a time, a delete comes every few milliseconds, and no check
// could share a listing with another otherwise.
func (c *Client) deletedQueue() {
	c.declared.wrote()
	c.counted.wrote()
	c.checks.deleted()
	c.consumers.deleted()
}

// New builds a client. It validates the settings and reads certificate files
// but never contacts the broker.
func New(cfg Config) (*Client, error) {
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	u, err := ValidateEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	if u.User != nil {
		// Credentials in the URL: take them unless username/password are set,
		// and keep them out of the URL (and so out of every error).
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
	amqpCfg, err := newAMQPSettings(cfg, u, base.TLSClientConfig, auth.tokens)
	if err != nil {
		return nil, err
	}
	// A backstop: every attempt already has its own timeout.
	overall := cfg.maxRequestTime() + cfg.RequestTimeout
	return &Client{
		cfg:       cfg,
		endpoint:  endpoint,
		http:      &http.Client{Transport: auth, Timeout: overall},
		transport: rt,
		amqp:      amqpCfg,
	}, nil
}

// Endpoint returns the normalised management API base URL, without
// credentials.
func (c *Client) Endpoint() string { return c.endpoint }

// redact returns s with the password of its user info hidden, also when s
// is not a URL with an authority ("u:p@host" parses as scheme "u"): then
// everything before the last "@" of what would be its authority is hidden.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil && strings.Contains(s, "://") {
		return u.Redacted()
	}
	rest := s
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	auth := rest
	if i := strings.IndexAny(auth, "/?#"); i >= 0 {
		auth = auth[:i]
	}
	if i := strings.LastIndex(auth, "@"); i >= 0 {
		return strings.Replace(s, auth[:i], "xxxxx", 1)
	}
	return s
}

func (c *Client) unreachable(op string, err error) error {
	if e := c.authError(op, err); e != nil {
		return e
	}
	if e := c.endpointMismatch(op, err); e != nil {
		return e
	}
	var fc *FirstContactError
	if errors.As(err, &fc) {
		return &Error{Op: op, Endpoint: c.endpoint, Reason: fc.Error(), Kind: ErrUnreachable, Hint: firstContactHint(fc)}
	}
	reason := transportReason(err)
	hint := fmt.Sprintf("Check that the management API answers at %s (the rabbitmq_management plugin enabled, the port open), or raise request_timeout", c.endpoint)
	if certificateError(err) {
		hint = "The TLS handshake failed over a certificate: set cacert_file (or RABBITMQ_CACERT) to the CA that signed the " +
			"management API's certificate (insecure = true skips that check), and clientcert_file and clientkey_file when the " +
			"server asks for a client certificate"
	}
	return &Error{Op: op, Endpoint: c.endpoint, Reason: reason, Kind: ErrUnreachable, Hint: hint}
}

// ValidateEndpoint checks a management API base URL, the one rule for the
// provider and the client alike: http or https, with a host, without a query
// or a fragment (the client appends /api/... to it); a trailing slash is
// tolerated and dropped. Credentials in the URL are left for the caller.
func ValidateEndpoint(raw string) (*url.URL, error) {
	s := strings.TrimRight(strings.TrimSpace(raw), "/")
	u, err := url.Parse(s)
	switch {
	case !strings.Contains(raw, "://"):
		return nil, fmt.Errorf("the endpoint must be an http or https URL such as http://127.0.0.1:15672; %q has no scheme: "+
			"write it as http://%s (or https:// for a TLS listener)", redact(s), redact(s))
	case err != nil:
		return nil, fmt.Errorf("the endpoint must be an http or https URL such as http://127.0.0.1:15672; %q does not parse", redact(s))
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("the endpoint must be an http or https URL such as http://127.0.0.1:15672; %q has scheme %q", redact(s), u.Scheme)
	case u.Host == "":
		return nil, fmt.Errorf("the endpoint must be an http or https URL such as http://127.0.0.1:15672; %q has no host", redact(s))
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, fmt.Errorf("the endpoint must be a base URL without a query or fragment; got %q", redact(s))
	}
	return u, nil
}

// newRequest builds a request for path below /api/; the auth transport adds
// the credentials.
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

// do is the one path of every management API call: it sends method on path
// (below /api/, segments escaped by the caller) with body encoded as JSON
// when not nil, honours ctx through every attempt and pause (a cancelled
// destroy stops at once), and decodes a successful answer into out when not
// nil; a write makes later reads wait for answers sent after it. Failures come back as *Error, classified once (see classify) and with
// RabbitMQ's reason kept, whatever the method and status.
func (c *Client) do(ctx context.Context, op, method, path string, body, out any) error {
	if method != http.MethodGet {
		// Shared reads that began before this write must not answer the
		// reads that follow it (see reads.go).
		defer c.wrote()
	}
	return c.send(ctx, op, method, path, body, out)
}

// send is do without telling the shared reads of a write: for a caller that
// tells them itself (DeleteQueue).
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
		// Read what the decoder left (a JSON decoder stops at the end of
		// the value: a trailing newline, a chunked body's last chunk) so
		// that net/http puts the connection back in the pool; closed before
		// its end, the connection is closed instead and the next request
		// opens a new one. More than bodyPeek is not worth reading: net/http
		// then closes the connection instead.
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

// getJSON is do for a GET.
func (c *Client) getJSON(ctx context.Context, op, path string, out any) error {
	return c.do(ctx, op, http.MethodGet, path, nil, out)
}

// writeFailed turns the failure of a write (a declaration or a delete) into
// an *Error. A write that got no answer in time is most often one the
// cluster's metadata store could not commit: when the broker answers that
// most of its nodes are down, the error says so (ErrUnavailable).
func (c *Client) writeFailed(ctx context.Context, op string, err error) error {
	var na *noAnswerError
	if errors.As(err, &na) && ctx.Err() == nil {
		if down, total := c.nodesDown(ctx); total > 0 && 2*len(down) >= total {
			return &Error{Op: op, Endpoint: c.endpoint, Reason: transportReason(err), Kind: ErrUnavailable,
				Hint: fmt.Sprintf("%d of the cluster's %d nodes are not running (%s): without a majority the cluster's metadata store "+
					"cannot take declarations or deletions, and this one may still take effect once the majority is back. Bring them "+
					"back (check `rabbitmqctl cluster_status`), then try again",
					len(down), total, strings.Join(down, ", "))}
		}
	}
	return c.unreachable(op, err)
}

// nodesDown asks the broker, in one short attempt, for the cluster nodes that
// are not running and the number of nodes; 0 nodes when it cannot tell (the
// user may lack the monitoring tag that reading nodes needs).
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

// transportReason is the cause of a transport error without the method and
// URL that net/http puts before it.
func transportReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
