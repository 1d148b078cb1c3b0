package tlscause

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// An error's text decides nothing: text that reads like a certificate's failure is not one, an
// alert about something else than a certificate is not one.
func TestCertificateRefused_typed(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		nil,
		errors.New("x509: certificate signed by unknown authority"),
		errors.New("remote error: tls: bad certificate"),
		fmt.Errorf("Exception (501) Reason: %q", "remote error: tls: certificate required"), // amqp091-go's frame error
		tls.AlertError(40), // handshake_failure
		&net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")},
	} {
		if CertificateRefused(err) {
			t.Errorf("%#v is a certificate error", err)
		}
	}
	for _, err := range []error{
		&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}},
		fmt.Errorf("dial: %w", x509.HostnameError{Host: "h"}),
		x509.CertificateInvalidError{Reason: x509.Expired},
		tls.AlertError(116), // certificate_required, as QUIC returns it
	} {
		if !CertificateRefused(err) {
			t.Errorf("%#v is not a certificate error", err)
		}
	}
}

// certificateAlert holds the certificate alerts of RFC 8446 and no other.
func TestCertificateAlert(t *testing.T) {
	t.Parallel()
	want := map[tls.AlertError]bool{42: true, 43: true, 44: true, 45: true, 46: true, 48: true, 116: true}
	for a := range tls.AlertError(255) {
		if got := certificateAlert(a); got != want[a] {
			t.Errorf("alert %d (%v): %v, want %v", a, a, got, want[a])
		}
	}
}

// Real TLS connections over loopback, each failing one way, and what CertificateRefused says of the
// client's error: the errors crypto/tls returns today, so that a change of their types in a new Go
// fails here.
func TestCertificateRefused_handshakes(t *testing.T) {
	t.Parallel()
	ca := brokertest.NewCert(t, "ca", nil, func(c *x509.Certificate) {
		c.IsCA, c.BasicConstraintsValid, c.KeyUsage = true, true, x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature
	})
	pool := x509.NewCertPool()
	pool.AddCert(ca.Leaf)
	server := brokertest.NewCert(t, "server", &ca, func(c *x509.Certificate) {
		c.DNSNames, c.ExtKeyUsage = []string{"rabbit.test"}, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	})
	expired := brokertest.NewCert(t, "expired", &ca, func(c *x509.Certificate) {
		c.DNSNames, c.ExtKeyUsage = []string{"rabbit.test"}, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		c.NotBefore, c.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)
	})
	client := brokertest.NewCert(t, "client", &ca, func(c *x509.Certificate) {
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	})
	stranger := brokertest.NewCert(t, "stranger", nil, func(c *x509.Certificate) {
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	})
	serverOnly := brokertest.NewCert(t, "server-only", &ca, func(c *x509.Certificate) {
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth} // not for a client
	})
	srv := func(cert tls.Certificate, auth tls.ClientAuthType, maxVersion uint16) *tls.Config {
		return &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: auth, ClientCAs: pool,
			MinVersion: tls.VersionTLS12, MaxVersion: maxVersion}
	}
	// A server that names no CA in its certificate request, so that the client sends the certificate
	// it has (crypto/tls sends none that the CAs named did not issue).
	namesNoCA := func(c *tls.Config) *tls.Config {
		c.ClientCAs = x509.NewCertPool()
		return c
	}
	cli := func(roots *x509.CertPool, name string, certs ...tls.Certificate) *tls.Config {
		return &tls.Config{RootCAs: roots, ServerName: name, Certificates: certs, MinVersion: tls.VersionTLS12}
	}
	for _, tc := range []struct {
		name           string
		server, client *tls.Config
		alert          tls.AlertError // the alert the server sent, 0 for none
		want           bool
	}{
		{"trusted", srv(server, tls.NoClientCert, 0), cli(pool, "rabbit.test"), 0, false},
		{"not trusted", srv(server, tls.NoClientCert, 0), cli(x509.NewCertPool(), "rabbit.test"), 0, true},
		{"another host name", srv(server, tls.NoClientCert, 0), cli(pool, "other.test"), 0, true},
		{"expired", srv(expired, tls.NoClientCert, 0), cli(pool, "rabbit.test"), 0, true},
		{"client certificate accepted", srv(server, tls.RequireAndVerifyClientCert, 0), cli(pool, "rabbit.test", client), 0, false},
		{"client certificate wanted, TLS 1.3", srv(server, tls.RequireAndVerifyClientCert, 0),
			cli(pool, "rabbit.test"), alertCertificateRequired, true},
		{"client certificate of another CA, TLS 1.3", namesNoCA(srv(server, tls.RequireAndVerifyClientCert, 0)),
			cli(pool, "rabbit.test", stranger), alertUnknownCA, true},
		{"client certificate of another CA, TLS 1.2", namesNoCA(srv(server, tls.RequireAndVerifyClientCert, tls.VersionTLS12)),
			cli(pool, "rabbit.test", stranger), alertUnknownCA, true},
		{"client certificate not for a client, TLS 1.2", srv(server, tls.RequireAndVerifyClientCert, tls.VersionTLS12),
			cli(pool, "rabbit.test", serverOnly), alertBadCertificate, true},
		// A TLS 1.2 server sends handshake_failure to a client without a certificate, as it does
		// for no common cipher: not a certificate's alert.
		{"client certificate wanted, TLS 1.2", srv(server, tls.RequireAnyClientCert, tls.VersionTLS12),
			cli(pool, "rabbit.test"), 40, false},
		{"client certificate of a CA not named, TLS 1.2", srv(server, tls.RequireAndVerifyClientCert, tls.VersionTLS12),
			cli(pool, "rabbit.test", stranger), 40, false},
		{"no common version", srv(server, tls.NoClientCert, tls.VersionTLS12),
			&tls.Config{RootCAs: pool, ServerName: "rabbit.test", MinVersion: tls.VersionTLS13}, 70, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A GET to an HTTPS server (the fake broker's) with tc.server, from a client with
			// tc.client: the client's error is its dial's or handshake's, else that of the answer's
			// first byte (a TLS 1.3 server refuses the client's certificate after the client's
			// handshake ended); nil if the answer came.
			tr := &http.Transport{TLSClientConfig: tc.client}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Timeout: 10 * time.Second, Transport: tr}
			resp, err := hc.Get(brokertest.NewTLS(t, tc.server).URL)
			if err == nil {
				_ = resp.Body.Close()
			}
			if tc.want && err == nil {
				t.Fatal("connected, want a refusal")
			}
			if !tc.want && tc.alert == 0 && err != nil {
				t.Fatalf("want a connection: %v", err)
			}
			if got := CertificateRefused(err); got != tc.want {
				t.Errorf("CertificateRefused(%#v: %v) = %v, want %v", err, err, got, tc.want)
			}
			if a, ok := receivedAlert(err); a != tc.alert || ok != (tc.alert != 0) {
				t.Errorf("the alert of %v: %d (%v), want %d", err, a, ok, tc.alert)
			}
			if err == nil {
				return
			}
			// As net/http hands it back (a *url.Error), and from a dial to an https:// proxy.
			for _, wrapped := range []error{
				fmt.Errorf("Get %q: %w", "https://rabbit.test", err),
				&net.OpError{Op: "proxyconnect", Net: "tcp", Err: fmt.Errorf("handshake: %w", err)},
			} {
				if CertificateRefused(wrapped) != tc.want {
					t.Errorf("CertificateRefused(%#v) = %v, want %v", wrapped, !tc.want, tc.want)
				}
			}
		})
	}
}
