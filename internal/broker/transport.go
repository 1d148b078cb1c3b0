package broker

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// idleConnsPerHost keeps enough idle connections for Terraform's largest
// usual parallelism (the default is 10) with room to spare.
const idleConnsPerHost = 64

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
