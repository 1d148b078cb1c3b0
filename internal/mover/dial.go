package mover

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/queuey/terraform-provider-queuey/internal/tlscause"
)

// Connecting to the AMQP port: one connection per operation, closed after it.

// dialTimeout bounds connecting to the AMQP port: TCP, TLS and the AMQP handshake together
// (amqp091-go's own default is 30 s for the TCP connection and 30 s more for the handshakes).
const dialTimeout = 15 * time.Second

const (
	heartbeat = 10 * time.Second
	// defaultCloseWait is the default of Mover.closeWait.
	defaultCloseWait = 5 * time.Second
)

// Config is what a Mover needs of the management client beside it: plain values and funcs.
type Config struct {
	// URL is the AMQP URL, amqp(s)://host:port, without credentials or path (EndpointFor).
	URL string
	// Derived says URL was derived from the management API's endpoint (EndpointFor).
	Derived bool
	// TLS is the TLS configuration of an amqps:// URL (cloned for each connection).
	TLS *tls.Config
	// Credentials returns the SASL PLAIN user and password of a connection made for op; a token
	// goes as the password. Its error is returned as it is.
	Credentials func(ctx context.Context, op string) (user, pass string, err error)
	// TokenAuth says the password is a token (for the caller's wording of a refused login).
	TokenAuth bool
	// Whoami returns the user the connection authenticates as and whether it may publish any
	// user_id (RabbitMQ's impersonator tag); "" when unknown.
	Whoami func(ctx context.Context) (user string, impersonator bool)
	// Wrote, when set, is called before and after each move or purge: they change what the
	// management API's listings say.
	Wrote func()
}

// Mover moves and purges messages over AMQP 0-9-1.
type Mover struct {
	cfg Config
	// timeout is dialTimeout; closeWait bounds the closing handshake of a connection: after an
	// interrupt, or with a broker that stopped answering, Close alone could wait for the heartbeat
	// to time out.
	timeout, closeWait time.Duration
}

// New returns the Mover of cfg.
func New(cfg Config) *Mover {
	return &Mover{cfg: cfg, timeout: dialTimeout, closeWait: defaultCloseWait}
}

// URL is the AMQP URL it connects to (no credentials).
func (m *Mover) URL() string { return m.cfg.URL }

// wrote tells the caller that messages may have changed.
func (m *Mover) wrote() {
	if m.cfg.Wrote != nil {
		m.cfg.Wrote()
	}
}

// dial opens an AMQP connection to vhost named name (shown in the management UI's connection
// list), within the dial bound and ctx.
func (m *Mover) dial(ctx context.Context, vhost, name string) (amqpConn, error) {
	op := fmt.Sprintf("connecting over AMQP to vhost %q", vhost)
	user, pass, err := m.cfg.Credentials(ctx, op)
	if err != nil {
		return amqpConn{}, err
	}
	deadline := time.Now().Add(m.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	var sniff amqpSniff
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(name)
	cfg := amqp.Config{
		SASL:       []amqp.Authentication{&amqp.PlainAuth{Username: user, Password: pass}},
		Vhost:      vhost,
		Heartbeat:  heartbeat,
		Properties: props,
		Dial: func(network, addr string) (net.Conn, error) {
			d := net.Dialer{Deadline: deadline}
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			// The deadline bounds the TLS and AMQP handshakes too; amqp091-go clears it once the
			// connection is open.
			_ = conn.SetDeadline(deadline)
			raw := sniff.wrap(conn)
			if !m.tlsURL() {
				return raw, nil
			}
			return sniff.handshake(raw, m.tlsConfig())
		},
	}
	// An interrupt ends the handshakes at once.
	stop := context.AfterFunc(ctx, func() { sniff.abort() })
	conn, err := amqp.DialConfig(m.libraryURL(), cfg)
	stop()
	if err != nil {
		if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
			<-ctx.Done() // ctx's deadline ended the handshake: say so
		}
		e := &Error{Op: op, URL: m.cfg.URL, Derived: m.cfg.Derived, Connecting: true, Reason: err.Error(),
			User: user, TokenAuth: m.cfg.TokenAuth}
		m.dialError(ctx, e, err, &sniff, !time.Now().Before(deadline))
		return amqpConn{}, e
	}
	return amqpConn{Connection: conn, sniff: &sniff}, nil
}

func (m *Mover) tlsURL() bool { return strings.HasPrefix(m.cfg.URL, "amqps:") }

// libraryURL is the URL amqp091-go dials: an amqps:// URL goes as amqp:// to the same host and
// port, for the mover runs the TLS handshake itself (sniff.handshake) and so keeps its typed errors,
// which amqp091-go flattens to text once the connection is handed over.
func (m *Mover) libraryURL() string {
	u, err := url.Parse(m.cfg.URL)
	if err != nil || u.Scheme != "amqps" {
		return m.cfg.URL // a URL that does not parse fails in amqp091-go as it is
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), amqpsPort)
	}
	u.Scheme = "amqp"
	return u.String()
}

// tlsConfig is the TLS configuration of one connection: a clone of the Config's, its server name
// the URL's host when it names none (as amqp091-go does).
func (m *Mover) tlsConfig() *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if m.cfg.TLS != nil {
		c = m.cfg.TLS.Clone()
	}
	if c.ServerName == "" {
		if u, err := url.Parse(m.cfg.URL); err == nil {
			c.ServerName = u.Hostname()
		}
	}
	return c
}

// dialError classifies e, a failed connection: err is the library's error, sniff what the socket
// saw, timedOut whether the dial bound passed.
func (m *Mover) dialError(ctx context.Context, e *Error, err error, sniff *amqpSniff, timedOut bool) {
	var ae *amqp.Error
	var rh tls.RecordHeaderError
	e.Kind, e.Cause = ErrUnreachable, NoAnswer
	if ctx.Err() != nil {
		e.Kind, e.Reason, e.Cause = ctx.Err(), "interrupted", noCause
		return
	}
	if errors.Is(err, amqp.ErrCredentials) || (errors.As(err, &ae) && ae.Code == amqp.AccessRefused) {
		e.Kind, e.Cause, e.Reason = ErrUnauthorized, CredentialsRefused, "the broker refused the credentials ("+err.Error()+")"
		return
	}
	if errors.Is(err, amqp.ErrVhost) || (errors.As(err, &ae) && ae.Code == amqp.NotAllowed) {
		e.Kind, e.Cause = ErrUnauthorized, VhostRefused
		return
	}
	first, tlsErr := sniff.first(), sniff.tlsError()
	if errors.As(err, &rh) {
		first = rh.RecordHeader[:]
	} else if tlscause.CertificateRefused(err) || tlscause.CertificateRefused(tlsErr) {
		e.Kind, e.Cause = errCertificate, CertificateRefused
		if tlsErr != nil {
			e.Reason = tlsErr.Error() // not amqp091-go's frame error that carries its text
		}
		return
	}
	if len(first) == 0 {
		m.unanswered(e, err, sniff.closedSilent(), timedOut)
		return
	}
	m.answered(e, first)
}

// unanswered completes e, the error of a port that sent nothing: no answer within the bound, a
// close without a word (silent: as a TLS port to plain bytes), or a refused connection.
func (m *Mover) unanswered(e *Error, err error, silent, timedOut bool) {
	if timedOut {
		e.Reason = fmt.Sprintf("no AMQP connection within %s (%s)", m.timeout, err)
		return
	}
	if silent && !m.tlsURL() {
		e.Reason = "the server closed the connection without answering the AMQP protocol header, as a TLS port does"
		e.Cause = ClosedUnanswered
	}
}

// answered completes e, the error of a port that answered first with something other than AMQP
// over the URL's scheme, or, over amqps://, with TLS and then refused the handshake for another
// reason than a certificate (a TLS 1.2 server that wants a client certificate and gets none sends
// handshake_failure, as it does for no common cipher).
func (m *Mover) answered(e *Error, first []byte) {
	if tlsRecord(first) && m.tlsURL() {
		e.Cause, e.Reason = noCause, "the TLS handshake failed: "+e.Reason
		return
	}
	if tlsRecord(first) {
		e.Kind, e.Cause, e.Reason = ErrWrongScheme, TLSPortPlainURL, "the port speaks TLS, and the URL is amqp:// (plain)"
		return
	}
	if bytes.HasPrefix(first, []byte("AMQP")) {
		e.Kind, e.Cause, e.Reason = ErrWrongScheme, PlainPortTLSURL, "the port speaks plain AMQP, and the URL is amqps:// (TLS)"
		return
	}
	e.Kind, e.Cause, e.Reason = errNotAMQP, OtherProtocol, fmt.Sprintf("the port does not speak AMQP: it answered %q", first)
	if bytes.HasPrefix(first, []byte("HTTP/")) {
		e.Reason = "the port speaks HTTP (the management API's port?), not AMQP"
	}
}

// tlsRecord reports whether b begins like a TLS record: what a TLS port answers to plain bytes.
func tlsRecord(b []byte) bool {
	return len(b) >= 2 && (b[0] == 0x15 || b[0] == 0x16) && b[1] == 0x03
}

// amqpSniff keeps what the server sent first on a connection, to tell after a failed handshake
// which protocol the port speaks, and the typed errors of the TLS beneath the AMQP handshake.
type amqpSniff struct {
	mu   sync.Mutex
	conn net.Conn
	got  []byte
	// silent: the server closed the connection (an end of file or a reset) before sending a byte.
	silent bool
	// tlsErr is the TLS handshake's error, else the first failed read over TLS (in TLS 1.3 a
	// server refuses the client's certificate after the client's handshake ended).
	tlsErr error
}

func (s *amqpSniff) wrap(conn net.Conn) net.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conn = conn
	return &sniffedConn{Conn: conn, s: s}
}

// handshake runs the TLS handshake over raw and returns the TLS connection, its reads watched.
func (s *amqpSniff) handshake(raw net.Conn, cfg *tls.Config) (net.Conn, error) {
	c := tls.Client(raw, cfg)
	if err := c.Handshake(); err != nil {
		_ = raw.Close()
		s.setTLSError(err)
		return nil, err
	}
	return &tlsConn{Conn: c, s: s}, nil
}

func (s *amqpSniff) setTLSError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tlsErr == nil {
		s.tlsErr = err
	}
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

func (s *amqpSniff) closedSilent() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.silent
}

func (s *amqpSniff) tlsError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tlsErr
}

// sniffedConn is the socket, its first bytes and an early close recorded.
type sniffedConn struct {
	net.Conn
	s    *amqpSniff
	seen bool
}

func (c *sniffedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	// (n >= 0 would do as well: a Read that returns nothing fails, and so does the handshake, the
	// sniffed bytes then empty either way)
	if !c.seen && n > 0 {
		c.seen = true
		c.s.mu.Lock()
		c.s.got = append([]byte(nil), p[:min(n, 16)]...)
		c.s.mu.Unlock()
	}
	if !c.seen && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
		c.s.mu.Lock()
		c.s.silent = true
		c.s.mu.Unlock()
	}
	return n, err
}

// tlsConn is the TLS connection handed to amqp091-go, its first failed read recorded: amqp091-go
// keeps only the text of a read's error.
type tlsConn struct {
	*tls.Conn
	s *amqpSniff
}

func (c *tlsConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.s.setTLSError(err)
	}
	return n, err
}

// channelError is the *Error of a failed channel operation op on queue.
func (m *Mover) channelError(op, vhost, queue string, err error) error {
	e := &Error{Op: op, URL: m.cfg.URL, Derived: m.cfg.Derived, Reason: err.Error()}
	var ae *amqp.Error
	if errors.As(err, &ae) {
		e.Reason = ae.Reason
		switch ae.Code {
		case amqp.NotFound:
			e.Kind, e.Reason = ErrNotFound, fmt.Sprintf("queue %q does not exist in vhost %q", queue, vhost)
		case amqp.AccessRefused:
			e.Kind, e.Cause = ErrUnauthorized, QueuePermission
		}
	}
	return e
}

// amqpConn is an open AMQP connection and the socket beneath it.
type amqpConn struct {
	*amqp.Connection
	sniff *amqpSniff
}

// close closes conn, waiting at most closeWait for the broker, then closing the socket:
// amqp091-go's heartbeater moves the read deadline that CloseDeadline sets 3 heartbeats on
// whenever a frame arrives. A message delivered and not acknowledged goes back to its queue either
// way.
func (m *Mover) close(conn amqpConn) {
	t := time.AfterFunc(m.closeWait, conn.sniff.close)
	defer t.Stop()
	_ = conn.CloseDeadline(time.Now().Add(m.closeWait))
}
