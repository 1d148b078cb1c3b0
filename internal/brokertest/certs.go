package brokertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// NewCert makes a certificate named name for a TLS fake or client, valid from an hour ago for a
// day unless edit (when not nil) says otherwise, signed by parent (self-signed when nil); its Leaf
// is set. x509.CreateCertificate draws the serial number.
func NewCert(t testing.TB, name string, parent *tls.Certificate, edit func(*x509.Certificate)) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	if edit != nil {
		edit(tmpl)
	}
	issuer, signer := tmpl, any(key)
	if parent != nil {
		issuer, signer = parent.Leaf, parent.PrivateKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// AsCA is an edit of NewCert that makes the certificate a CA's.
func AsCA(c *x509.Certificate) {
	c.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	c.BasicConstraintsValid, c.IsCA = true, true
}

// WriteCert writes c, made by NewCert, into dir as PEM files: its certificate to name-cert.pem
// and its key to name-key.pem, which it returns.
func WriteCert(t testing.TB, dir, name string, c tls.Certificate) (certFile, keyFile string) {
	t.Helper()
	key, ok := c.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		t.Fatalf("the key of %s is a %T, not NewCert's", name, c.PrivateKey)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+"-cert.pem"), filepath.Join(dir, name+"-key.pem")
	for file, block := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: c.Certificate[0]}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile
}
