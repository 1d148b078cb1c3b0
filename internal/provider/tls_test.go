package provider

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// tlsQueueConfig is a provider pointed at an HTTPS endpoint with the given TLS
// settings, and one queuey_queue.
const tlsQueueConfig = `
provider "queuey" {
  endpoint        = %q
  request_timeout = "5s"
%s
}

resource "queuey_queue" "test" {
  name = %q
}
`

// certificateHint is the advice that comes with a refused certificate.
const certificateHint = `The\s+TLS\s+handshake\s+failed\s+over\s+a\s+certificate:\s+set\s+cacert_file`

// checkProxied asserts that the HTTPS front answered requests (the provider
// did not reach the broker some other way).
func checkProxied(p *faultProxy) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if len(p.Records()) == 0 {
			return fmt.Errorf("no request reached the HTTPS front at %s", p.URL)
		}
		return nil
	}
}

// TestAccTLS_serverCertificate: an HTTPS management API whose certificate
// comes from a private CA is refused with a certificate error when
// cacert_file names another CA, reached with insecure = true, and verified
// with cacert_file naming its CA.
func TestAccTLS_serverCertificate(t *testing.T) {
	ca, other, server, _, _ := newClientAuthPKI(t)
	p := newFaultProxy(t, &tls.Config{Certificates: []tls.Certificate{server.TLS}, MinVersion: tls.VersionTLS12})
	name := uniqueName("tls")
	cleanupQueues(t, "/", name)
	resource.ParallelTest(t, queueCase(t, name, []resource.TestStep{
		{
			Config: fmt.Sprintf(tlsQueueConfig, p.URL, fmt.Sprintf("  cacert_file = %q", other.CertFile), name),
			ExpectError: regexp.MustCompile(`at\s+` + regexp.QuoteMeta(p.URL) + `\s+failed:\s+tls:\s+failed\s+to\s+verify\s+certificate:\s+` +
				`x509:\s+certificate\s+signed\s+by\s+unknown\s+authority\.\s+` + certificateHint),
		},
		{
			Config: fmt.Sprintf(tlsQueueConfig, p.URL, "  insecure = true", name),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkBrokerQueue(t, "/", name, `{}`),
				checkProxied(p),
			),
		},
		{
			// Verified this time: the refresh and plan go through, nothing to do.
			Config:           fmt.Sprintf(tlsQueueConfig, p.URL, fmt.Sprintf("  cacert_file = %q", ca.CertFile), name),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	}))
}

// TestAccTLS_clientCertificate: a management API front that requires and
// verifies a client certificate is refused without one, or with one from
// another CA, and reached with clientcert_file and clientkey_file.
func TestAccTLS_clientCertificate(t *testing.T) {
	ca, _, server, client, stranger := newClientAuthPKI(t)
	p := newFaultProxy(t, &tls.Config{
		Certificates: []tls.Certificate{server.TLS},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    ca.Pool,
		MinVersion:   tls.VersionTLS12,
	})
	name := uniqueName("mtls")
	cleanupQueues(t, "/", name)
	withCA := fmt.Sprintf("  cacert_file = %q\n", ca.CertFile)
	// Under TLS 1.3 the server refuses the missing certificate after the
	// handshake, and net/http names where it read the alert
	// ("readLoopPeekFailLocked: remote error: ...") when the alert beats its
	// first read.
	refused := regexp.MustCompile(`at\s+` + regexp.QuoteMeta(p.URL) + `\s+failed:\s+(readLoopPeekFailLocked:\s+)?remote\s+error:\s+tls:\s+[a-z ]*certificate[a-z ]*\.\s+` + certificateHint)
	resource.ParallelTest(t, queueCase(t, name, []resource.TestStep{
		{
			// No client certificate.
			Config:      fmt.Sprintf(tlsQueueConfig, p.URL, withCA, name),
			ExpectError: refused,
		},
		{
			// A client certificate the front does not trust.
			Config: fmt.Sprintf(tlsQueueConfig, p.URL, withCA+fmt.Sprintf("  clientcert_file = %q\n  clientkey_file  = %q",
				stranger.CertFile, stranger.KeyFile), name),
			ExpectError: refused,
		},
		{
			Config: fmt.Sprintf(tlsQueueConfig, p.URL, withCA+fmt.Sprintf("  clientcert_file = %q\n  clientkey_file  = %q",
				client.CertFile, client.KeyFile), name),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkBrokerQueue(t, "/", name, `{}`),
				checkBrokerQueue(t, "/", name+".dead", `{}`),
				checkProxied(p),
			),
		},
	}))
}

// TestTLS_certificateRefusal checks the management API client against HTTPS
// servers with certificates from a private CA, without a broker: a refused
// certificate, either way, is reported with advice on the TLS settings after
// one connection (no retry), and the right settings connect.
func TestTLS_certificateRefusal(t *testing.T) {
	ca, other, server, client, stranger := newClientAuthPKI(t)
	// The fake management API over TLS, demanding a client certificate or not.
	start := func(clientAuth tls.ClientAuthType) (string, func() int) {
		srv := brokertest.NewTLS(t, &tls.Config{Certificates: []tls.Certificate{server.TLS}, ClientAuth: clientAuth,
			ClientCAs: ca.Pool, MinVersion: tls.VersionTLS12})
		return srv.URL, srv.Conns
	}
	plain, plainConns := start(tls.NoClientCert)
	mutual, mutualConns := start(tls.RequireAndVerifyClientCert)

	for _, tc := range []struct {
		name     string
		cfg      broker.Config
		conns    func() int
		wantErr  string // empty: must succeed
		wantConn int
	}{
		{"unknown CA", broker.Config{Endpoint: plain, CACertFile: other.CertFile}, plainConns,
			"x509: certificate signed by unknown authority", 1},
		{"insecure", broker.Config{Endpoint: plain, Insecure: true}, plainConns, "", 2},
		{"right CA", broker.Config{Endpoint: plain, CACertFile: ca.CertFile}, plainConns, "", 3},
		{"no client certificate", broker.Config{Endpoint: mutual, CACertFile: ca.CertFile}, mutualConns,
			"certificate", 1},
		{"client certificate from another CA", broker.Config{Endpoint: mutual, CACertFile: ca.CertFile,
			ClientCertFile: stranger.CertFile, ClientKeyFile: stranger.KeyFile}, mutualConns,
			"certificate", 2},
		{"client certificate", broker.Config{Endpoint: mutual, CACertFile: ca.CertFile,
			ClientCertFile: client.CertFile, ClientKeyFile: client.KeyFile}, mutualConns, "", 3},
	} {
		tc.cfg.RequestTimeout = 5 * time.Second
		tc.cfg.Username, tc.cfg.Password = "guest", "guest"
		c, err := broker.New(tc.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, err = c.GetVhost(context.Background(), "/")
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && err == nil:
			t.Errorf("%s: connected, want a refusal", tc.name)
		case tc.wantErr != "":
			msg := brokerDetail(err)
			if !strings.Contains(msg, tc.wantErr) || !strings.Contains(msg, "set cacert_file") || !errors.Is(err, broker.ErrUnreachable) {
				t.Errorf("%s: got %q, want %q with advice on the TLS settings", tc.name, msg, tc.wantErr)
			}
			if strings.Contains(msg, "attempts") {
				t.Errorf("%s: a refused certificate was retried: %s", tc.name, msg)
			}
		}
		if got := tc.conns(); got != tc.wantConn {
			t.Errorf("%s: the server has accepted %d connections in all, want %d (a refused certificate is not retried)", tc.name, got, tc.wantConn)
		}
	}
}

// testCert is a certificate of the tests, as a tls.Certificate, as PEM files
// and as a pool that trusts it (what a CA's is for).
type testCert struct {
	TLS               tls.Certificate
	Pool              *x509.CertPool
	CertFile, KeyFile string
}

// newClientAuthPKI makes a CA, a server certificate (valid for 127.0.0.1 and
// localhost) and a client certificate it issues, and a client certificate
// from another CA, their files in a directory of the test.
func newClientAuthPKI(t *testing.T) (ca, other, server, client, stranger testCert) {
	t.Helper()
	dir := t.TempDir()
	cert := func(name string, parent *tls.Certificate, edit func(*x509.Certificate)) testCert {
		c := testCert{TLS: brokertest.NewCert(t, name, parent, edit), Pool: x509.NewCertPool()}
		c.Pool.AddCert(c.TLS.Leaf)
		c.CertFile, c.KeyFile = brokertest.WriteCert(t, dir, name, c.TLS)
		return c
	}
	// The loopback names are for the server; a client certificate ignores them.
	leaf := func(usage x509.ExtKeyUsage) func(*x509.Certificate) {
		return func(c *x509.Certificate) {
			c.ExtKeyUsage, c.IPAddresses, c.DNSNames = []x509.ExtKeyUsage{usage}, []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"}
		}
	}
	ca, other = cert("queuey-test", nil, brokertest.AsCA), cert("other", nil, brokertest.AsCA)
	return ca, other, cert("server", &ca.TLS, leaf(x509.ExtKeyUsageServerAuth)), cert("terraform", &ca.TLS, leaf(x509.ExtKeyUsageClientAuth)),
		cert("stranger", &other.TLS, leaf(x509.ExtKeyUsageClientAuth))
}
