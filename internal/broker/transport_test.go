package broker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// Every way a TLS connection to the management API fails over a certificate has the cause
// CauseCertificate, decided on crypto/tls's and crypto/x509's types through net/http's wrappers, and
// is not retried: the server's certificate not trusted, for another host or expired (the client's
// check), and the client's certificate refused by the server, with an alert in the TLS 1.2 handshake
// (unknown_ca, bad_certificate) or on the first read after a TLS 1.3 handshake
// (certificate_required). A TLS 1.2 server that wants a certificate and gets none sends
// handshake_failure, as for no common cipher: no certificate's cause, and retried.
func TestManagementCertificateCauses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := newTestCert(t, dir, "ca", nil, func(c *x509.Certificate) {
		c.IsCA, c.BasicConstraintsValid, c.KeyUsage = true, true, x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature
	})
	serverCert := func(name string, edit func(*x509.Certificate)) testCert {
		return newTestCert(t, dir, name, &ca.TLS, func(c *x509.Certificate) {
			c.IPAddresses, c.ExtKeyUsage = []net.IP{net.IPv4(127, 0, 0, 1)}, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
			if edit != nil {
				edit(c)
			}
		})
	}
	server := serverCert("server", nil)
	otherHost := serverCert("other-host", func(c *x509.Certificate) { c.IPAddresses, c.DNSNames = nil, []string{"rabbit.test"} })
	expired := serverCert("expired", func(c *x509.Certificate) {
		c.NotBefore, c.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)
	})
	client := newTestCert(t, dir, "client", &ca.TLS, func(c *x509.Certificate) {
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	})
	stranger := newTestCert(t, dir, "stranger", nil, func(c *x509.Certificate) {
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	})
	notForClients := serverCert("not-for-clients", nil)
	pool := x509.NewCertPool()
	pool.AddCert(ca.TLS.Leaf)
	// srv is a TLS server with cert: clients wants a client certificate issued by clientCAs (nil:
	// none wanted), maxVersion caps the version (0: TLS 1.3).
	srv := func(cert testCert, clientCAs *x509.CertPool, maxVersion uint16) *tls.Config {
		c := &tls.Config{Certificates: []tls.Certificate{cert.TLS}, MinVersion: tls.VersionTLS12, MaxVersion: maxVersion}
		if clientCAs != nil {
			c.ClientAuth, c.ClientCAs = tls.RequireAndVerifyClientCert, clientCAs
		}
		return c
	}
	// A server that names no CA in its certificate request, so that the client sends the one it has
	// (crypto/tls sends none that the CAs named did not issue).
	namesNoCA := x509.NewCertPool()
	for _, tc := range []struct {
		name   string
		server *tls.Config
		client Config
		cause  Cause // -1: no error
		conns  int
	}{
		{"trusted", srv(server, nil, 0), Config{CACertFile: ca.CertFile}, -1, 1},
		{"not trusted", srv(server, nil, 0), Config{}, CauseCertificate, 1},
		{"another host name", srv(otherHost, nil, 0), Config{CACertFile: ca.CertFile}, CauseCertificate, 1},
		{"expired", srv(expired, nil, 0), Config{CACertFile: ca.CertFile}, CauseCertificate, 1},
		{"client certificate accepted", srv(server, pool, 0),
			Config{CACertFile: ca.CertFile, ClientCertFile: client.CertFile, ClientKeyFile: client.KeyFile}, -1, 1},
		{"client certificate wanted, TLS 1.3: certificate_required after the handshake", srv(server, pool, 0),
			Config{CACertFile: ca.CertFile}, CauseCertificate, 1},
		{"client certificate of another CA, TLS 1.2: unknown_ca", srv(server, namesNoCA, tls.VersionTLS12),
			Config{CACertFile: ca.CertFile, ClientCertFile: stranger.CertFile, ClientKeyFile: stranger.KeyFile}, CauseCertificate, 1},
		{"client certificate not for a client, TLS 1.2: bad_certificate", srv(server, pool, tls.VersionTLS12),
			Config{CACertFile: ca.CertFile, ClientCertFile: notForClients.CertFile, ClientKeyFile: notForClients.KeyFile}, CauseCertificate, 1},
		{"client certificate wanted, TLS 1.2: handshake_failure", srv(server, pool, tls.VersionTLS12),
			Config{CACertFile: ca.CertFile}, CauseNoAnswer, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := brokertest.NewTLS(t, tc.server)
			cfg := tc.client
			cfg.Endpoint, cfg.Username, cfg.Password, cfg.RequestTimeout = s.URL, "u", "p", 5*time.Second
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			withClock(c) // retries without waiting
			_, err = c.GetVhost(context.Background(), "/")
			if got := errOf(err).Cause; got != tc.cause || (err != nil && !errors.Is(err, ErrUnreachable)) {
				t.Errorf("got cause %d (%v), want %d", got, err, tc.cause)
			}
			if got := s.Conns(); (tc.conns == 1) != (got == 1) {
				t.Errorf("%d connections, want %d (a refused certificate is not retried, other failures are)", got, tc.conns)
			}
		})
	}
}

// testCert is a certificate made up for one test, signed by its parent (self-signed without one),
// as PEM files and as a tls.Certificate with its Leaf.
type testCert struct {
	TLS               tls.Certificate
	CertFile, KeyFile string
}

// newTestCert makes the certificate named name, signed by parent (self-signed when nil), valid from
// an hour ago for a day unless edit says otherwise, and writes it to dir.
func newTestCert(t *testing.T, dir, name string, parent *tls.Certificate, edit func(*x509.Certificate)) testCert {
	t.Helper()
	c := testCert{TLS: brokertest.NewCert(t, name, parent, edit)}
	c.CertFile, c.KeyFile = brokertest.WriteCert(t, dir, name, c.TLS)
	return c
}

// A CA file or client key pair that cannot be read, a CA file without a
// certificate, or half a key pair fails the client's setup, naming the
// settings.
func TestTLSFilesUnreadable(t *testing.T) {
	dir := t.TempDir()
	missing, empty := filepath.Join(dir, "missing.pem"), filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	pair := []Setting{SettingClientCertFile, SettingClientKeyFile}
	for _, tc := range []struct {
		cfg      Config
		problem  ConfigProblem
		settings []Setting
	}{
		{Config{CACertFile: missing}, ConfigUnreadable, []Setting{SettingCACertFile}},
		{Config{CACertFile: empty}, ConfigNoPEM, []Setting{SettingCACertFile}},
		{Config{ClientCertFile: missing, ClientKeyFile: missing}, ConfigKeyPair, pair},
		{Config{ClientCertFile: missing}, ConfigHalfPair, pair},
	} {
		tc.cfg.Endpoint, tc.cfg.Username, tc.cfg.Password = "https://rabbit:15671", "u", "p"
		_, err := New(tc.cfg)
		var e *ConfigError
		if !errors.As(err, &e) || e.Problem != tc.problem || !slices.Equal(e.Settings, tc.settings) {
			t.Errorf("%+v: %v, want problem %d with %v", tc.cfg, err, tc.problem, tc.settings)
		}
	}
}
