package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// endpointMismatch is the *Error of a transport failure that says the endpoint is wrong, or nil.
func (c *Client) endpointMismatch(op string, err error) *Error {
	e := &Error{Op: op, Endpoint: c.endpoint, Err: err}
	var pe *protocolError
	var rh tls.RecordHeaderError
	switch {
	case errors.As(err, &pe) && tlsRecord(pe.got):
		e.Reason = "the server answered plain HTTP with TLS"
		c.wrongScheme(e, "https")
	case errors.As(err, &pe):
		e.Kind, e.Reason, e.Cause = ErrNotHTTP, pe.Error(), notHTTPCause(pe.got)
	case errors.As(err, &rh) && strings.HasPrefix(string(rh.RecordHeader[:]), httpPrefix):
		e.Reason = "the server answered the TLS handshake with plain HTTP"
		c.wrongScheme(e, "http")
	case errors.As(err, &rh):
		e.Kind, e.Cause = ErrNotHTTP, notHTTPCause(rh.RecordHeader[:])
		e.Reason = fmt.Sprintf("the server does not speak TLS or HTTP: it answered %q", rh.RecordHeader[:])
	default:
		return nil
	}
	return e
}

// notHTTPCause says what the port that answered got is: RabbitMQ's AMQP port, or another.
func notHTTPCause(got []byte) Cause {
	if strings.HasPrefix(string(got), "AMQP") {
		return CauseAMQPPort
	}
	return CauseNotHTTP
}

// wrongScheme marks e as an endpoint whose port wants scheme, suggesting the endpoint with it.
func (c *Client) wrongScheme(e *Error, scheme string) {
	u := c.base
	u.Scheme = scheme
	e.Kind, e.Cause, e.SuggestedURL = ErrWrongScheme, CauseWantHTTP, u.Redacted()
	if scheme == "https" {
		e.Cause = CauseWantHTTPS
	}
}

// notAPI explains a 400 without a reason: a wrong path, or a TLS port that answered plain HTTP.
func (c *Client) notAPI(ctx context.Context, e *Error) {
	u := c.base
	if u.Scheme == "http" && speaksTLS(ctx, u.Host, c.cfg.RequestTimeout) {
		c.wrongScheme(e, "https")
		return
	}
	e.Kind, e.Cause = ErrNotAPI, CauseNotAPI
	p := strings.TrimRight(u.Path, "/")
	if strings.HasSuffix(p, "/api") {
		u.Path = strings.TrimSuffix(p, "/api")
		e.Cause, e.SuggestedURL = CauseAPISuffix, u.Redacted()
	} else if p != "" {
		e.Cause, e.Path, e.SuggestedURL = CauseAPIPath, p, u.Scheme+"://"+u.Host
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
