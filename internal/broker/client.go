package broker

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

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

// readReason is RabbitMQ's explanation in an error answer: its reason, else its message.
func readReason(r io.Reader) string {
	var body rabbithole.ErrorResponse
	_ = json.NewDecoder(io.LimitReader(r, bodyPeek)).Decode(&body)
	if body.Reason != "" {
		return body.Reason
	}
	return body.Message
}
