package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// Client talks to one management API.
type Client struct {
	cfg              Config
	endpoint         string // normalised: no trailing slash
	endpointRedacted string
	rh               *rabbithole.Client
	http             *http.Client
	transport        *retryTransport

	// Reads by vhost shared by concurrent callers (see reads.go).
	declared flight[map[string]Queue] // what each queue was declared with
	counted  flight[map[string]Queue] // the same, with message counts
	checks   flight[map[string]Queue] // message and consumer counts
	vhosts   flight[Vhost]

	nodeMu      sync.Mutex
	nodeDefault *string // the node's default queue type, once read ("" for none)
}

// wrote tells the shared queue reads that this client changed something:
// none of them answers a later caller with what it read before.
func (c *Client) wrote() {
	c.declared.wrote()
	c.counted.wrote()
	c.checks.wrote()
}

// New builds a client. It validates the settings and reads certificate files
// but never contacts the broker.
func New(cfg Config) (*Client, error) {
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	endpoint := strings.TrimRight(strings.TrimSpace(cfg.Endpoint), "/")
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint must be an http or https URL such as http://127.0.0.1:15672; got %q", redact(endpoint))
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
		endpoint = u.String()
	}
	base, err := newBaseTransport(cfg)
	if err != nil {
		return nil, err
	}
	rt := &retryTransport{base: base, timeout: cfg.RequestTimeout, budget: cfg.retryBudget()}
	auth, err := newAuthTransport(cfg, rt, tokenTransport(cfg, base))
	if err != nil {
		return nil, err
	}
	rh, err := rabbithole.NewTLSClient(endpoint, cfg.Username, cfg.Password, auth)
	if err != nil {
		return nil, fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	// A backstop: every attempt already has its own timeout.
	overall := cfg.MaxRequestTime() + cfg.RequestTimeout
	rh.SetTimeout(overall)
	return &Client{
		cfg:              cfg,
		endpoint:         endpoint,
		endpointRedacted: endpoint,
		rh:               rh,
		http:             &http.Client{Transport: auth, Timeout: overall},
		transport:        rt,
	}, nil
}

// Endpoint returns the normalised management API base URL.
func (c *Client) Endpoint() string { return c.endpointRedacted }

// ObserveAttempts calls f before every HTTP attempt; for tests and
// benchmarks. Call it before the client is used.
func (c *Client) ObserveAttempts(f func(*http.Request)) { c.transport.onAttempt = f }

func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// fail turns an error from rabbit-hole or the transport into an *Error.
func (c *Client) fail(ctx context.Context, op string, err error) error {
	var rhe rabbithole.ErrorResponse
	switch {
	case errors.As(err, &rhe):
		reason := rhe.Reason
		if reason == "" {
			reason = rhe.Message
		}
		return c.classify(ctx, op, rhe.StatusCode, reason)
	case strings.Contains(err.Error(), "401 Unauthorized"):
		// rabbit-hole drops the reason of a 401: authProblem finds it out.
		return c.classify(ctx, op, http.StatusUnauthorized, "")
	}
	return c.unreachable(op, err)
}

func (c *Client) unreachable(op string, err error) error {
	if e := c.authError(op, err); e != nil {
		return e
	}
	reason := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		reason = ue.Err.Error()
	}
	hint := fmt.Sprintf("Check that the management API answers at %s (the rabbitmq_management plugin enabled, the port open), or raise request_timeout", c.endpointRedacted)
	if certificateError(err) {
		hint = "The TLS handshake failed over a certificate: set cacert_file (or RABBITMQ_CACERT) to the CA that signed the " +
			"management API's certificate (insecure = true skips that check), and clientcert_file and clientkey_file when the " +
			"server asks for a client certificate"
	}
	return &Error{Op: op, Endpoint: c.endpointRedacted, Reason: reason, Kind: ErrUnreachable, Hint: hint}
}

// getJSON performs a GET of path (below /api/) and decodes the answer.
func (c *Client) getJSON(ctx context.Context, op, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint+"/api/"+path, nil)
	if err != nil {
		return &Error{Op: op, Endpoint: c.endpointRedacted, Reason: err.Error()}
	}
	req.SetBasicAuth(c.cfg.Username, c.cfg.Password)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return c.unreachable(op, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode >= 400 {
		return c.classify(ctx, op, resp.StatusCode, readReason(resp.Body))
	}
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return &Error{Op: op, Endpoint: c.endpointRedacted, Status: resp.StatusCode, Reason: "unreadable answer: " + err.Error()}
	}
	return nil
}
