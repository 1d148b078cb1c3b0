package broker

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// idleConnsPerHost keeps idle connections for Terraform's usual parallelism (default 10) with room.
const idleConnsPerHost = 64

// idleConnTimeout closes a connection idle that long (net/http's default is 90 s).
const idleConnTimeout = 3 * time.Second

// newBaseTransport builds the TLS-aware, keep-alive HTTP transport.
func newBaseTransport(cfg Config) (*http.Transport, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.Insecure} //nolint:gosec // the user asked for it (Config.Insecure)
	if cfg.CACertFile != "" {
		pem, err := os.ReadFile(cfg.CACertFile)
		if err != nil {
			return nil, &ConfigError{Problem: ConfigUnreadable, Settings: []Setting{SettingCACertFile}, Err: err}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &ConfigError{Problem: ConfigNoPEM, Settings: []Setting{SettingCACertFile}, Values: []string{cfg.CACertFile}}
		}
		tlsCfg.RootCAs = pool
	}
	pair := []Setting{SettingClientCertFile, SettingClientKeyFile}
	if (cfg.ClientCertFile == "") != (cfg.ClientKeyFile == "") {
		return nil, &ConfigError{Problem: ConfigHalfPair, Settings: pair}
	}
	if cfg.ClientCertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.ClientCertFile, cfg.ClientKeyFile)
		if err != nil {
			return nil, &ConfigError{Problem: ConfigKeyPair, Settings: pair, Err: err}
		}
		tlsCfg.Certificates = []tls.Certificate{cert}
	}
	dialer := &net.Dialer{Timeout: cfg.RequestTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           sniffingDial(dialer),
		DialTLSContext:        tlsDial(dialer, tlsCfg),
		TLSClientConfig:       tlsCfg,
		TLSHandshakeTimeout:   cfg.RequestTimeout,
		ResponseHeaderTimeout: cfg.RequestTimeout,
		MaxIdleConns:          idleConnsPerHost,
		MaxIdleConnsPerHost:   idleConnsPerHost,
		// A connection idle this long is closed: a provider's calls come in bursts, and a client
		// that is done (a provider instance of an ended command, in a process that goes on) must not
		// hold the broker's sockets for long.
		IdleConnTimeout:   idleConnTimeout,
		ForceAttemptHTTP2: false,
	}, nil
}

// sniffingDial fails a plain-HTTP answer not beginning "HTTP/" at once (*protocolError).
func sniffingDial(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &sniffConn{Conn: conn}, nil
	}
}

// tlsDial completes the handshake while dialling, so a non-TLS server fails typed.
func tlsDial(d *net.Dialer, base *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cfg := base.Clone()
		if cfg.ServerName == "" {
			if host, _, err := net.SplitHostPort(addr); err == nil {
				cfg.ServerName = host
			}
		}
		conn := tls.Client(raw, cfg)
		if err := conn.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			// Wrapped: net/http replaces a bare RecordHeaderError beginning "HTTP/" with an untyped
			// one.
			return nil, &handshakeError{err: err}
		}
		return conn, nil
	}
}

// sniffConn is a plain connection whose first read must look like HTTP.
type sniffConn struct {
	net.Conn
	checked bool
}

func (c *sniffConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.checked && n > 0 {
		c.checked = true
		if got := p[:min(n, len(httpPrefix))]; !bytes.HasPrefix([]byte(httpPrefix), got) {
			return 0, &protocolError{got: append([]byte(nil), p[:min(n, 16)]...)}
		}
	}
	return n, err
}

const httpPrefix = "HTTP/"

// protocolError is a server that answered plain HTTP with another protocol.
type protocolError struct{ got []byte }

func (e *protocolError) Error() string {
	return fmt.Sprintf("the server does not speak HTTP: it answered %q", e.got)
}

// tlsRecord reports whether b begins like a TLS record: what a TLS port answers to plain HTTP.
func tlsRecord(b []byte) bool {
	return len(b) >= 2 && (b[0] == 0x15 || b[0] == 0x16) && b[1] == 0x03
}

// wrongEndpoint reports whether a transport error says the endpoint is wrong: final.
func wrongEndpoint(err error) bool {
	var pe *protocolError
	var rh tls.RecordHeaderError
	return errors.As(err, &pe) || errors.As(err, &rh)
}

// handshakeError is a failed TLS handshake.
type handshakeError struct{ err error }

func (e *handshakeError) Error() string { return e.err.Error() }
func (e *handshakeError) Unwrap() error { return e.err }
