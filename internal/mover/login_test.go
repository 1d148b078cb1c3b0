package mover

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// What the AMQP handshake sends and what a refusal says: the credentials Config.Credentials gives
// go as SASL PLAIN; a refused login is ErrUnauthorized with cause CredentialsRefused, the user sent
// and whether it was a token, never the password; a vhost the user may not open is VhostRefused.
func TestLogin(t *testing.T) {
	_, _, a := fakeBroker(t, 0)
	a.Login("guest", "right-pw")
	for _, tc := range []struct {
		name      string
		user, pwd string // what Credentials gives, and the handshake sends
		token     bool
		vhost     string
		cause     Cause
		says      string
	}{
		{"wrong password", "guest", "s3cret-pw", false, "/", CredentialsRefused, `the broker refused the credentials (Exception (403)`},
		{"token", "terraform-provider-queuey", "tok-s3cret-pw", true, "/", CredentialsRefused, "the broker refused the credentials"},
		{"vhost refused", "guest", "right-pw", false, "nowhere", VhostRefused, "failed: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked string
			m := New(Config{URL: a.URL(), TokenAuth: tc.token, Credentials: func(_ context.Context, op string) (string, string, error) {
				asked = op
				return tc.user, tc.pwd, nil
			}})
			before := len(a.Logins())
			_, err := m.Purge(context.Background(), tc.vhost, "q")
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrUnauthorized) || e.Cause != tc.cause || !e.Connecting ||
				!strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), `connecting over AMQP to vhost "`+tc.vhost+`" at `+a.URL()) {
				t.Errorf("got %#v, want an *Error of kind ErrUnauthorized, cause %v, saying %q", err, tc.cause, tc.says)
			}
			if e != nil && (e.User != tc.user || e.TokenAuth != tc.token) {
				t.Errorf("the error names user %q (token %v), want %q (%v)", e.User, e.TokenAuth, tc.user, tc.token)
			}
			if strings.Contains(err.Error(), "s3cret-pw") {
				t.Errorf("the error shows the password: %v", err)
			}
			if asked != `connecting over AMQP to vhost "`+tc.vhost+`"` {
				t.Errorf("the credentials were asked for %q", asked)
			}
			logins := a.Logins()
			if len(logins) != before+1 || logins[before] != [2]string{tc.user, tc.pwd} {
				t.Errorf("the handshake sent %v, want %s and %s", logins[before:], tc.user, tc.pwd)
			}
		})
	}
}

// Credentials that cannot be had (a token endpoint that refuses) fail the operation before it
// dials, with Credentials' own error.
func TestLogin_noCredentials(t *testing.T) {
	_, _, a := fakeBroker(t, 0)
	refused := errors.New("token refused")
	m := New(Config{URL: a.URL(), Credentials: func(context.Context, string) (string, string, error) { return "", "", refused }})
	if _, err := m.Purge(context.Background(), "/", "q"); err != refused {
		t.Errorf("got %v, want Credentials' error as it is", err)
	}
	if _, err := m.Move(context.Background(), Move{Vhost: "/", From: "q.dead", To: "q"}); err != refused {
		t.Errorf("a move: got %v, want Credentials' error as it is", err)
	}
	if len(a.Logins()) != 0 {
		t.Errorf("dialled without credentials: %v", a.Logins())
	}
}

// A TLS port whose certificate the client does not trust is errCertificate (an ErrUnreachable)
// with cause CertificateRefused; a URL derived from the management endpoint says so in Derived.
func TestDialCertificate(t *testing.T) {
	tlsSrv := brokertest.NewTLS(t, nil)
	for _, derived := range []bool{false, true} {
		m := moverAt("amqps://" + strings.TrimPrefix(tlsSrv.URL, "https://"))
		m.cfg.Derived = derived
		_, err := m.Purge(context.Background(), "/", "q")
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, errCertificate) || !errors.Is(err, ErrUnreachable) ||
			e.Cause != CertificateRefused || e.Derived != derived {
			t.Errorf("an untrusted certificate (derived %v): %#v", derived, err)
		}
	}
	m := moverAt("amqp://" + brokertest.ClosedAddr(t))
	m.cfg.Derived = true
	_, err := m.Purge(context.Background(), "/", "q")
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrUnreachable) || e.Cause != NoAnswer || !e.Derived {
		t.Errorf("a derived URL: %#v", err)
	}
}

// Every way a TLS handshake fails over a certificate is CertificateRefused, decided on the typed
// errors of crypto/tls and crypto/x509: the server's certificate for another name or expired (the
// client's check), and a server that wants a client certificate, which refuses with an alert
// during the handshake (TLS 1.2) or after the client's handshake ended (TLS 1.3, where amqp091-go
// alone would keep only the text of the read that failed).
func TestDialCertificateRefused(t *testing.T) {
	t.Parallel()
	plain := brokertest.NewTLS(t, nil)
	refusing := brokertest.NewTLS(t, &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs: x509.NewCertPool(), MaxVersion: tls.VersionTLS12})
	for _, tc := range []struct {
		name   string
		srv    *brokertest.Server
		client func(*tls.Config)
		says   string
	}{
		{"another host name", plain, func(c *tls.Config) { c.ServerName = "other.example" }, "other.example"},
		{"expired", plain, func(c *tls.Config) { c.Time = func() time.Time { return time.Now().AddDate(200, 0, 0) } }, "expired"},
		{"client certificate refused, TLS 1.2", refusing, func(c *tls.Config) { c.Certificates = refusing.TLS.Certificates }, "unknown certificate authority"},
		{"client certificate wanted, TLS 1.3",
			brokertest.NewTLS(t, &tls.Config{ClientAuth: tls.RequireAnyClientCert, MinVersion: tls.VersionTLS13}),
			nil, "certificate required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := moverAt("amqps://" + strings.TrimPrefix(tc.srv.URL, "https://"))
			pool := x509.NewCertPool()
			pool.AddCert(tc.srv.Certificate())
			m.cfg.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
			if tc.client != nil {
				tc.client(m.cfg.TLS)
			}
			_, err := m.Purge(context.Background(), "/", "q")
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, errCertificate) || e.Cause != CertificateRefused || !e.Connecting {
				t.Fatalf("got %#v, want an *Error of cause CertificateRefused", err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("the error does not say %q: %v", tc.says, err)
			}
			if strings.Contains(err.Error(), "Exception (") {
				t.Errorf("the error is amqp091-go's frame error, not the TLS error: %v", err)
			}
		})
	}
}

// A TLS 1.2 port that wants a client certificate and gets none sends handshake_failure, as it does
// for no common cipher: not a certificate's cause, and not a wrong scheme either (the port speaks
// TLS, as the URL says).
func TestDialHandshakeRefused(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewTLS(t, &tls.Config{ClientAuth: tls.RequireAnyClientCert, MaxVersion: tls.VersionTLS12})
	m := moverAt("amqps://" + strings.TrimPrefix(srv.URL, "https://"))
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	m.cfg.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	_, err := m.Purge(context.Background(), "/", "q")
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrUnreachable) || errors.Is(err, errCertificate) || e.Cause != noCause || !e.Connecting {
		t.Fatalf("got %#v, want an ErrUnreachable without a cause", err)
	}
	if want := "the TLS handshake failed: remote error: tls: handshake failure"; !strings.Contains(err.Error(), want) {
		t.Errorf("the error does not say %q: %v", want, err)
	}
}
