package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
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

// managementPort is where the management API usually listens.
const managementPort = "15672"

// endpointMismatch is the *Error of a transport failure that says the endpoint is wrong, or nil.
func (c *Client) endpointMismatch(op string, err error) *Error {
	m := c.mismatch(err)
	if m.kind == nil {
		return nil
	}
	return &Error{Op: op, Endpoint: c.endpoint, Reason: m.reason, Kind: m.kind, Hint: m.hint}
}

// endpointProblem is what a transport error says of the endpoint: kind (nil: none), cause and fix.
type endpointProblem struct {
	kind         error
	reason, hint string
}

func (c *Client) mismatch(err error) endpointProblem {
	var pe *protocolError
	var rh tls.RecordHeaderError
	switch {
	case errors.As(err, &pe) && tlsRecord(pe.got):
		return endpointProblem{ErrWrongScheme, "the server answered plain HTTP with TLS", c.schemeHint("https")}
	case errors.As(err, &pe):
		return endpointProblem{ErrNotHTTP, pe.Error(), notHTTPHint(pe.got)}
	case errors.As(err, &rh) && strings.HasPrefix(string(rh.RecordHeader[:]), httpPrefix):
		return endpointProblem{ErrWrongScheme, "the server answered the TLS handshake with plain HTTP", c.schemeHint("http")}
	case errors.As(err, &rh):
		return endpointProblem{ErrNotHTTP, fmt.Sprintf("the server does not speak TLS or HTTP: it answered %q", rh.RecordHeader[:]),
			notHTTPHint(rh.RecordHeader[:])}
	}
	return endpointProblem{}
}

// notHTTPHint says what the port that answered got is, and where the management API usually is.
func notHTTPHint(got []byte) string {
	what := "This port speaks another protocol than HTTP"
	if strings.HasPrefix(string(got), "AMQP") {
		what = "This is RabbitMQ's AMQP port (it answered with the AMQP protocol header), not the management API"
	}
	return what + ": set endpoint (or RABBITMQ_ENDPOINT) to the management API's URL, which is usually on port " +
		managementPort + ", e.g. http://127.0.0.1:" + managementPort
}

// schemeHint says to use scheme instead of the endpoint's.
func (c *Client) schemeHint(scheme string) string {
	u := c.base
	was := u.Scheme
	u.Scheme = scheme
	if scheme == "https" {
		return fmt.Sprintf("This port speaks TLS: set endpoint to %s (https://, not %s://)", u.Redacted(), was)
	}
	return fmt.Sprintf("This port speaks plain HTTP, not TLS: set endpoint to %s (http://, not %s://), "+
		"or enable TLS on the management listener", u.Redacted(), was)
}

// notAPI explains a 400 without a reason: a wrong path, or a TLS port that answered plain HTTP.
func (c *Client) notAPI(ctx context.Context, e *Error) {
	u := c.base
	if u.Scheme == "http" && speaksTLS(ctx, u.Host, c.cfg.RequestTimeout) {
		e.Kind, e.Hint = ErrWrongScheme, c.schemeHint("https")
		return
	}
	e.Kind = ErrNotAPI
	p := strings.TrimRight(u.Path, "/")
	if strings.HasSuffix(p, "/api") {
		u.Path = strings.TrimSuffix(p, "/api")
		e.Hint = fmt.Sprintf("The endpoint is the management API's base URL, without /api (the provider appends /api/ itself): "+
			"set endpoint to %s", u.Redacted())
	} else if p != "" {
		e.Hint = fmt.Sprintf("The endpoint's path %q is not where the management API is: set endpoint to its base URL, "+
			"e.g. %s://%s (with the path prefix only when management.path_prefix is set)", p, u.Scheme, u.Host)
	} else {
		e.Hint = "The server at the endpoint is not RabbitMQ's management API (it answered 400 without a reason): " +
			"set endpoint to the management API's base URL, usually on port " + managementPort
	}
}

// speaksTLS reports whether a TLS handshake with host succeeds; the certificate is not checked.
func speaksTLS(ctx context.Context, host string, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, min(timeout, probeTimeout))
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // a probe of the protocol only; nothing is sent
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "80")
	}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

const probeTimeout = 2 * time.Second

// MissingCredentialError says that basic auth lacks its username or password.
type MissingCredentialError struct {
	// Setting is "username" or "password".
	Setting string
}

func (e *MissingCredentialError) Error() string {
	return fmt.Sprintf("the management API needs a %s (basic auth), and none is set", e.Setting)
}

// checkCredentials returns a *MissingCredentialError, unless headers carry an Authorization header.
func checkCredentials(cfg Config) error {
	if cfg.authKind() != authBasic {
		return nil
	}
	for name := range cfg.Headers {
		if http.CanonicalHeaderKey(name) == "Authorization" {
			return nil
		}
	}
	if cfg.Username == "" {
		return &MissingCredentialError{Setting: "username"}
	}
	if cfg.Password == "" {
		return &MissingCredentialError{Setting: "password"}
	}
	return nil
}

// wrongEndpoint reports whether a transport error says the endpoint is wrong: final.
func wrongEndpoint(err error) bool {
	var pe *protocolError
	var rh tls.RecordHeaderError
	return errors.As(err, &pe) || errors.As(err, &rh)
}
