package provider

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCA is a certificate authority made up for one test: an ECDSA P-256 key
// and a self-signed certificate, written as PEM to CertFile.
type testCA struct {
	Cert     *x509.Certificate
	Key      *ecdsa.PrivateKey
	Pool     *x509.CertPool
	CertFile string
	dir      string
}

// issuedCert is a certificate signed by a testCA, as PEM files and as a
// tls.Certificate.
type issuedCert struct {
	CertFile string
	KeyFile  string
	TLS      tls.Certificate
}

// newTestCA makes a CA named name whose files go into dir.
func newTestCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	key, tmpl := newKeyAndTemplate(t, name)
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid = true
	tmpl.IsCA = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	ca := &testCA{Cert: cert, Key: key, Pool: pool, dir: dir, CertFile: filepath.Join(dir, name+"-ca.pem")}
	writePEM(t, ca.CertFile, "CERTIFICATE", der)
	return ca
}

// issue signs a leaf certificate named name: a server certificate valid for
// 127.0.0.1 and localhost, or a client certificate.
func (ca *testCA) issue(t *testing.T, name string, server bool) issuedCert {
	t.Helper()
	key, tmpl := newKeyAndTemplate(t, name)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"localhost"}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	ic := issuedCert{CertFile: filepath.Join(ca.dir, name+"-cert.pem"), KeyFile: filepath.Join(ca.dir, name+"-key.pem")}
	writePEM(t, ic.CertFile, "CERTIFICATE", der)
	writePEM(t, ic.KeyFile, "EC PRIVATE KEY", keyDER)
	ic.TLS, err = tls.LoadX509KeyPair(ic.CertFile, ic.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return ic
}

// newClientAuthPKI makes a CA, a server and a client certificate it issues,
// and a client certificate from another CA.
func newClientAuthPKI(t *testing.T) (ca, other *testCA, server, client, stranger issuedCert) {
	t.Helper()
	dir := t.TempDir()
	ca, other = newTestCA(t, dir, "queuey-test"), newTestCA(t, dir, "other")
	return ca, other, ca.issue(t, "server", true), ca.issue(t, "terraform", false), other.issue(t, "stranger", false)
}

// newKeyAndTemplate returns a new key and the template of a certificate
// named name, valid from an hour ago for a day.
func newKeyAndTemplate(t *testing.T, name string) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key, &x509.Certificate{
		SerialNumber: serialNumber(t),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
}

func serialNumber(t *testing.T) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func writePEM(t *testing.T, file, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
