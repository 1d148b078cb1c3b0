// Package tlscause tells, from the typed errors of crypto/tls and crypto/x509, whether a TLS
// connection failed over a certificate: the one rule that the management client
// (internal/broker) and the AMQP mover (internal/mover) share. It reads no error's text and imports
// no package of this module.
package tlscause

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"reflect"
)

// CertificateRefused reports whether err is a TLS connection that failed over a certificate, by
// either side: ours (the server's certificate not trusted, for another host name, expired or
// otherwise invalid) or the server's (an alert about the client's certificate, during the
// handshake in TLS 1.2 or on the first read after it in TLS 1.3). Wrappers that unwrap (net/http's
// *url.Error among them) are seen through.
func CertificateRefused(err error) bool {
	if err == nil {
		return false
	}
	var (
		verr     *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		alert    tls.AlertError
	)
	if errors.As(err, &verr) || errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) {
		return true
	}
	if errors.As(err, &alert) {
		return certificateAlert(alert)
	}
	a, ok := receivedAlert(err)
	return ok && certificateAlert(a)
}

// TLS alerts about a certificate (RFC 8446 section 6.2).
const (
	alertBadCertificate         tls.AlertError = 42
	alertUnsupportedCertificate tls.AlertError = 43
	alertCertificateRevoked     tls.AlertError = 44
	alertCertificateExpired     tls.AlertError = 45
	alertCertificateUnknown     tls.AlertError = 46
	alertUnknownCA              tls.AlertError = 48
	alertCertificateRequired    tls.AlertError = 116
)

// certificateAlert reports whether a is an alert about a certificate.
func certificateAlert(a tls.AlertError) bool {
	switch a {
	case alertBadCertificate, alertUnsupportedCertificate, alertCertificateRevoked, alertCertificateExpired,
		alertCertificateUnknown, alertUnknownCA, alertCertificateRequired:
		return true
	}
	return false
}

// receivedAlert is the alert in err, an alert the server sent: crypto/tls returns it (over TCP;
// tls.AlertError is QUIC's) as a *net.OpError whose Err is crypto/tls's unexported alert type, a
// uint8, so its code is read by its type, never by its text. Every *net.OpError of the chain is
// looked at, not only the first: net/http puts one of its own ("proxyconnect") around a failed
// dial to an https:// proxy.
func receivedAlert(err error) (tls.AlertError, bool) {
	var oe *net.OpError
	for e := err; errors.As(e, &oe) && oe.Err != nil; e = oe.Err {
		v := reflect.ValueOf(oe.Err)
		if v.Kind() == reflect.Uint8 && v.Type().PkgPath() == "crypto/tls" {
			return tls.AlertError(v.Uint()), true
		}
	}
	return 0, false
}
