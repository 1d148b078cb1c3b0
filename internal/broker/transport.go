package broker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// idleConnsPerHost keeps enough idle connections for Terraform's largest
// usual parallelism (the default is 10) with room to spare.
const idleConnsPerHost = 64

// backoff returns the pause before retry number n (1-based): 100ms, 200ms,
// 400ms, ... capped at 2s.
func backoff(n int) time.Duration {
	d := 100 * time.Millisecond << (n - 1)
	if d > 2*time.Second || d <= 0 {
		d = 2 * time.Second
	}
	return d
}

// maxElapsed bounds one request with all its attempts and pauses.
func maxElapsed(timeout time.Duration, attempts int) time.Duration {
	total := time.Duration(attempts) * timeout
	for n := 1; n < attempts; n++ {
		total += backoff(n)
	}
	return total
}

// newBaseTransport builds the TLS-aware, keep-alive HTTP transport.
func newBaseTransport(cfg Config) (*http.Transport, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.Insecure} //nolint:gosec // the user asked for it with insecure = true
	if cfg.CACertFile != "" {
		pem, err := os.ReadFile(cfg.CACertFile)
		if err != nil {
			return nil, fmt.Errorf("reading cacert_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("cacert_file %s holds no PEM certificate", cfg.CACertFile)
		}
		tlsCfg.RootCAs = pool
	}
	if (cfg.ClientCertFile == "") != (cfg.ClientKeyFile == "") {
		return nil, errors.New("clientcert_file and clientkey_file go together: set both or neither")
	}
	if cfg.ClientCertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.ClientCertFile, cfg.ClientKeyFile)
		if err != nil {
			return nil, fmt.Errorf("loading clientcert_file and clientkey_file: %w", err)
		}
		tlsCfg.Certificates = []tls.Certificate{cert}
	}
	dialer := &net.Dialer{Timeout: cfg.RequestTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       tlsCfg,
		TLSHandshakeTimeout:   cfg.RequestTimeout,
		ResponseHeaderTimeout: cfg.RequestTimeout,
		MaxIdleConns:          idleConnsPerHost,
		MaxIdleConnsPerHost:   idleConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     false,
	}, nil
}

// retryTransport gives every attempt its own timeout, retries connection
// errors and 5xx answers with backoff, and undoes the Close flag rabbit-hole
// sets on every request so that connections are reused.
type retryTransport struct {
	base     http.RoundTripper
	timeout  time.Duration
	attempts int
	// onAttempt, when set, observes every attempt (tests and benchmarks).
	onAttempt func(*http.Request)
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var lastErr error
	for n := 1; n <= t.attempts; n++ {
		if n > 1 {
			select {
			case <-req.Context().Done():
				return nil, req.Context().Err()
			case <-time.After(backoff(n - 1)):
			}
		}
		resp, err := t.attempt(req)
		if err == nil && !retryableStatus(resp.StatusCode) {
			return resp, nil
		}
		if err == nil {
			if n == t.attempts {
				return resp, nil
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
			lastErr = fmt.Errorf("HTTP %d", resp.StatusCode)
			continue
		}
		if req.Context().Err() != nil || certificateError(err) {
			// A refused certificate stays refused: no retry.
			return nil, err
		}
		lastErr = err
	}
	return nil, &attemptsError{attempts: t.attempts, timeout: t.timeout, last: lastErr}
}

func (t *retryTransport) attempt(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	r := req.Clone(ctx)
	r.Close = false
	if req.Body != nil && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			cancel()
			return nil, err
		}
		r.Body = body
	}
	if t.onAttempt != nil {
		t.onAttempt(r)
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && req.Context().Err() == nil {
			return nil, fmt.Errorf("no answer within request_timeout %s", t.timeout)
		}
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// certificateError reports whether err is a TLS certificate refusal, by this
// client (the server's certificate does not verify) or by the server (a TLS
// alert about the client's certificate, which crypto/tls does not export).
func certificateError(err error) bool {
	var verr *tls.CertificateVerificationError
	if errors.As(err, &verr) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "x509: ") || (strings.Contains(msg, "tls: ") && strings.Contains(msg, "certificate"))
}

func retryableStatus(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// attemptsError says that every attempt failed.
type attemptsError struct {
	attempts int
	timeout  time.Duration
	last     error
}

func (e *attemptsError) Error() string {
	return fmt.Sprintf("no usable answer after %d attempts (request_timeout %s each): %v", e.attempts, e.timeout, e.last)
}

func (e *attemptsError) Unwrap() error { return e.last }
