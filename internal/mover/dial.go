package mover

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The AMQP 0-9-1 side of the client (amqp091-go), for what the management
// API cannot do well: moving dead letters back (amqp_redrive.go) and purging
// a queue with the count of what it removed (amqp_purge.go). A connection is
// opened per operation and closed after it; its URL carries no credentials
// (they go as SASL PLAIN) and no vhost (the operation's).

// AMQP defaults.
const (
	amqpPort  = "5672"
	amqpsPort = "5671"
	// AMQPDialTimeout bounds connecting to the AMQP port: TCP, TLS and the
	// AMQP handshake together (amqp091-go's own default is 30 s for the TCP
	// connection and 30 s more for the handshakes).
	AMQPDialTimeout = 15 * time.Second
	amqpHeartbeat   = 10 * time.Second
)

// Kinds of AMQP failure, besides ErrNotFound, ErrUnauthorized and
// ErrWrongScheme. Test with errors.Is.
var (
	// ErrAMQPUnreachable: no AMQP connection within AMQPDialTimeout.
	ErrAMQPUnreachable = errors.New("AMQP endpoint unreachable")
	// ErrNotAMQP: the port answered with another protocol (e.g. HTTP).
	ErrNotAMQP = errors.New("endpoint does not speak AMQP")
)

// amqpSettings is how the client reaches the AMQP port.
type amqpSettings struct {
	url     string // amqp(s)://host:port, no credentials, no path
	derived bool   // derived from the management endpoint
	tls     *tls.Config
	method  authMethod
	user    string
	secret  string // password or static bearer token
	tokens  *sharedToken
	timeout time.Duration
	// closeWait bounds the closing handshake of a connection: after an
	// interrupt, or with a broker that stopped answering, Close alone could
	// wait for the heartbeat to time out.
	closeWait time.Duration
}

// newAMQPSettings takes cfg.AMQPEndpoint, or derives the AMQP URL from the
// management endpoint mgmt: amqp://HOST:5672 for http, amqps://HOST:5671 for
// https. TLS settings and credentials are the management API's.
func newAMQPSettings(cfg Config, mgmt *url.URL, tlsCfg *tls.Config, tokens *sharedToken) (amqpSettings, error) {
	s := amqpSettings{tls: tlsCfg, method: cfg.authKind(), user: cfg.Username, secret: cfg.Password,
		tokens: tokens, timeout: AMQPDialTimeout, closeWait: amqpCloseWait}
	if s.method == authBearerToken {
		s.secret = cfg.BearerToken
	}
	if cfg.AMQPEndpoint != "" {
		u, err := ValidateAMQPEndpoint(cfg.AMQPEndpoint)
		if err != nil {
			return s, err
		}
		s.url = u.String()
		return s, nil
	}
	s.url, s.derived = deriveAMQPEndpoint(mgmt), true
	return s, nil
}

// deriveAMQPEndpoint is the AMQP URL of the broker whose management API is at
// mgmt: the same host, amqp://HOST:5672 for http and amqps://HOST:5671 for
// https.
func deriveAMQPEndpoint(mgmt *url.URL) string {
	if mgmt.Scheme == "https" {
		return "amqps://" + net.JoinHostPort(mgmt.Hostname(), amqpsPort)
	}
	return "amqp://" + net.JoinHostPort(mgmt.Hostname(), amqpPort)
}

// ValidateAMQPEndpoint checks an amqp_endpoint: amqp or amqps, with a host,
// without credentials (they come from the provider's authentication
// settings), vhost path, query or fragment. A port left out is the scheme's.
func ValidateAMQPEndpoint(raw string) (*url.URL, error) {
	const want = "amqp_endpoint must be an amqp or amqps URL such as amqp://127.0.0.1:5672"
	s := strings.TrimRight(strings.TrimSpace(raw), "/")
	// (ifs, not a switch: gremlins counts a case's condition as never run)
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%s; %q does not parse", want, redact(s))
	}
	if u.Scheme != "amqp" && u.Scheme != "amqps" {
		return nil, fmt.Errorf("%s; %q has scheme %q", want, redact(s), u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%s; %q has no host", want, redact(s))
	}
	if u.User != nil {
		return nil, fmt.Errorf("%s without credentials; %q has some: the AMQP connection authenticates with the provider's "+
			"username and password (or token), sent as SASL PLAIN", want, redact(s))
	}
	if u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%s without a path or query; got %q (the vhost comes from the action's vhost or the provider's)", want, redact(s))
	}
	if u.Port() == "" {
		port := amqpPort
		if u.Scheme == "amqps" {
			port = amqpsPort
		}
		u.Host = net.JoinHostPort(u.Hostname(), port)
	}
	return u, nil
}

// AMQPEndpoint returns the AMQP URL the client connects to (no credentials).
func (c *Client) AMQPEndpoint() string { return c.amqp.url }

// AMQPError is a failed AMQP operation.
type AMQPError struct {
	// Op says what was being done.
	Op string
	// URL is the AMQP URL, without credentials.
	URL    string
	Reason string
	// Kind is one of the Err* values, or nil.
	Kind error
	// Hint says what to do next.
	Hint string
}

func (e *AMQPError) Error() string {
	msg := fmt.Sprintf("%s at %s failed: %s", e.Op, e.URL, strings.TrimSuffix(e.Reason, "."))
	if e.Hint != "" {
		msg += ". " + e.Hint
	}
	return msg
}

// Unwrap lets errors.Is see the kind.
func (e *AMQPError) Unwrap() error { return e.Kind }

// credentials returns the SASL PLAIN username and password: basic auth as
// is; with a bearer or OAuth 2.0 token, the token is the password (RabbitMQ's
// OAuth 2.0 backend reads the token from the password and ignores the
// username).
func (c *Client) credentials(ctx context.Context) (string, string, error) {
	switch c.amqp.method {
	case authOAuth2:
		tok, err := c.amqp.tokens.token(ctx)
		if err != nil {
			return "", "", err
		}
		return c.oauthUser(), tok, nil
	case authBearerToken:
		return c.oauthUser(), c.amqp.secret, nil
	}
	return c.amqp.user, c.amqp.secret, nil
}

// oauthUser is the username sent with a token: the username setting when
// given, else a fixed name (the OAuth 2.0 backend ignores it).
func (c *Client) oauthUser() string {
	if c.amqp.user != "" {
		return c.amqp.user
	}
	return "terraform-provider-queuey"
}

// dialAMQP opens an AMQP connection to vhost named name (shown in the
// management UI's connection list), within AMQPDialTimeout and ctx.
func (c *Client) dialAMQP(ctx context.Context, vhost, name string) (amqpConn, error) {
	op := fmt.Sprintf("connecting over AMQP to vhost %q", vhost)
	user, pass, err := c.credentials(ctx)
	if err != nil {
		if e := c.authError(op, err); e != nil {
			return amqpConn{}, e
		}
		return amqpConn{}, err
	}
	deadline := time.Now().Add(c.amqp.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	var sniff amqpSniff
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(name)
	cfg := amqp.Config{
		SASL:       []amqp.Authentication{&amqp.PlainAuth{Username: user, Password: pass}},
		Vhost:      vhost,
		Heartbeat:  amqpHeartbeat,
		Properties: props,
		Dial: func(network, addr string) (net.Conn, error) {
			d := net.Dialer{Deadline: deadline}
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			// The deadline bounds the TLS and AMQP handshakes too;
			// amqp091-go clears it once the connection is open.
			_ = conn.SetDeadline(deadline)
			return sniff.wrap(conn), nil
		},
	}
	if strings.HasPrefix(c.amqp.url, "amqps:") {
		cfg.TLSClientConfig = c.amqp.tls.Clone()
	}
	// An interrupt ends the handshakes at once.
	stop := context.AfterFunc(ctx, func() { sniff.abort() })
	conn, err := amqp.DialConfig(c.amqp.url, cfg)
	stop()
	if err != nil {
		if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
			<-ctx.Done() // ctx's deadline ended the handshake: say so
		}
		return amqpConn{}, c.dialError(ctx, op, err, sniff.first(), !time.Now().Before(deadline))
	}
	return amqpConn{Connection: conn, sniff: &sniff}, nil
}

// dialError classifies a failed AMQP connection.
func (c *Client) dialError(ctx context.Context, op string, err error, first []byte, timedOut bool) error {
	e := &AMQPError{Op: op, URL: c.amqp.url, Reason: err.Error(), Kind: ErrAMQPUnreachable}
	setting := "set amqp_endpoint (or RABBITMQ_AMQP_ENDPOINT) to RabbitMQ's AMQP listener, e.g. amqp://HOST:5672 or amqps://HOST:5671"
	if c.amqp.derived {
		setting = "amqp_endpoint is not set, so this URL was derived from endpoint: " + setting
	}
	var ae *amqp.Error
	var rh tls.RecordHeaderError
	// (ifs, not switches: gremlins counts a case's condition as never run)
	if ctx.Err() != nil {
		e.Kind, e.Reason, e.Hint = ctx.Err(), "interrupted", ""
		return e
	}
	if errors.Is(err, amqp.ErrCredentials) || (errors.As(err, &ae) && ae.Code == amqp.AccessRefused) {
		e.Kind, e.Reason = ErrUnauthorized, "the broker refused the credentials ("+err.Error()+")"
		e.Hint = c.amqpAuthHint()
		return e
	}
	if errors.Is(err, amqp.ErrVhost) || (errors.As(err, &ae) && ae.Code == amqp.NotAllowed) {
		e.Kind = ErrUnauthorized
		e.Hint = "The user may not open a connection to this vhost: grant it access there (`rabbitmqctl set_permissions`)"
		return e
	}
	if errors.As(err, &rh) {
		first = rh.RecordHeader[:]
	} else if certificateError(err) {
		e.Hint = "The TLS handshake failed over a certificate: set cacert_file to the CA that signed the broker's certificate " +
			"(insecure = true skips that check); " + setting
		return e
	}
	if len(first) == 0 {
		c.unanswered(e, err, timedOut, setting)
		return e
	}
	if tlsRecord(first) {
		e.Kind, e.Reason = ErrWrongScheme, "the port speaks TLS, and the URL is amqp:// (plain)"
		e.Hint = "Use amqps:// for a TLS listener (usually port " + amqpsPort + "); " + setting
		return e
	}
	if bytes.HasPrefix(first, []byte("AMQP")) {
		e.Kind, e.Reason = ErrWrongScheme, "the port speaks plain AMQP, and the URL is amqps:// (TLS)"
		e.Hint = "Use amqp:// for a plain listener (usually port " + amqpPort + "); " + setting
		return e
	}
	e.Kind, e.Reason = ErrNotAMQP, fmt.Sprintf("the port does not speak AMQP: it answered %q", first)
	if bytes.HasPrefix(first, []byte(httpPrefix)) {
		e.Reason = "the port speaks HTTP (the management API's port?), not AMQP"
	}
	e.Hint = setting
	return e
}

// unanswered completes e, the error of a port that sent nothing: no answer
// within the bound, a close without a word (as a TLS port to plain bytes),
// or a refused connection.
func (c *Client) unanswered(e *AMQPError, err error, timedOut bool, setting string) {
	e.Hint = "Check that RabbitMQ's AMQP listener answers there and that nothing blocks the port; " + setting
	if timedOut {
		e.Reason = fmt.Sprintf("no AMQP connection within %s (%s)", c.amqp.timeout, err)
		return
	}
	if strings.Contains(err.Error(), "EOF") && !strings.HasPrefix(c.amqp.url, "amqps:") {
		e.Reason = "the server closed the connection without answering the AMQP protocol header, as a TLS port does"
		e.Hint = "If the port is a TLS listener, use amqps:// (usually port " + amqpsPort + "); " + setting
	}
}

func (c *Client) amqpAuthHint() string {
	if c.amqp.method != authBasic {
		return "The token is sent as the AMQP password: check that it is valid for this broker and grants access to the vhost"
	}
	return fmt.Sprintf("Check username and password (user %q): the AMQP connection uses the management API's credentials", c.amqp.user)
}

// amqpSniff keeps the first bytes the server sent on a connection, to tell
// after a failed handshake which protocol the port speaks.
type amqpSniff struct {
	mu   sync.Mutex
	conn net.Conn
	got  []byte
}

func (s *amqpSniff) wrap(conn net.Conn) net.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conn = conn
	return &sniffedConn{Conn: conn, s: s}
}

// abort ends the handshakes at once (an interrupt).
func (s *amqpSniff) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		_ = s.conn.SetDeadline(time.Unix(1, 0))
	}
}

// close closes the socket.
func (s *amqpSniff) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.conn.Close()
}

func (s *amqpSniff) first() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}

type sniffedConn struct {
	net.Conn
	s    *amqpSniff
	seen bool
}

func (c *sniffedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	// (n >= 0 would do: a Read that returns nothing fails, and so does
	// the handshake, the sniffed bytes then empty either way)
	if !c.seen && n > 0 {
		c.seen = true
		c.s.mu.Lock()
		c.s.got = append([]byte(nil), p[:min(n, 16)]...)
		c.s.mu.Unlock()
	}
	return n, err
}

// channelError is the *AMQPError of a failed channel operation on queue.
func (c *Client) channelError(op, vhost, queue string, err error) error {
	e := &AMQPError{Op: op, URL: c.amqp.url, Reason: err.Error()}
	var ae *amqp.Error
	if errors.As(err, &ae) {
		e.Reason = ae.Reason
		switch ae.Code {
		case amqp.NotFound:
			e.Kind, e.Reason = ErrNotFound, fmt.Sprintf("queue %q does not exist in vhost %q", queue, vhost)
		case amqp.AccessRefused:
			e.Kind = ErrUnauthorized
			e.Hint = "The user lacks a permission on the queue: consuming and purging need read on it, publishing write on " +
				"amq.default (the topology's queues_pattern and write_pattern cover both)"
		}
	}
	return e
}

// amqpCloseWait is the default of amqpSettings.closeWait.
const amqpCloseWait = 5 * time.Second

// amqpConn is an open AMQP connection and the socket beneath it.
type amqpConn struct {
	*amqp.Connection
	sniff *amqpSniff
}

// closeAMQP closes conn, waiting at most closeWait for the broker, then
// closing the socket: amqp091-go's heartbeater moves the read deadline that
// CloseDeadline sets 3 heartbeats on whenever a frame arrives. A message
// delivered and not acknowledged goes back to its queue either way.
func (c *Client) closeAMQP(conn amqpConn) {
	t := time.AfterFunc(c.amqp.closeWait, conn.sniff.close)
	defer t.Stop()
	_ = conn.CloseDeadline(time.Now().Add(c.amqp.closeWait))
}
