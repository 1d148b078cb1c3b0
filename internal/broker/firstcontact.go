package broker

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"
)

// firstContactError says nothing answered at Addr before timing.firstContact ran out.
type firstContactError struct {
	// Addr is the host:port tried.
	Addr string
	// Attempts and Waited say how often and how long it was tried.
	Attempts int
	Waited   time.Duration
	// Err is the last attempt's failure.
	Err error
}

func (e *firstContactError) Error() string {
	return fmt.Sprintf("nothing answered at %s in %s (%d attempts): %s", e.Addr, e.Waited.Round(100*time.Millisecond),
		e.Attempts, dialCause(e.Err))
}

func (e *firstContactError) Unwrap() error { return e.Err }

// Unresolved reports whether the host did not resolve.
func (e *firstContactError) Unresolved() bool {
	var dns *net.DNSError
	return errors.As(e.Err, &dns)
}

// dialFailed reports whether a connection could not be made for another reason than a timeout.
func dialFailed(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.As(err, &op) && op.Op == "dial" && !op.Timeout()
}

// dialCause is a dial error without net's "dial tcp ADDR:" prefix: "connect: connection refused".
func dialCause(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.Error()
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

// hostPort is u's host:port, with the scheme's port when u names none.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}
