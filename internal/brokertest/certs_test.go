package brokertest

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
)

// A certificate signed by a CA from NewCert verifies against that CA alone, and its files load
// as the same key pair.
func TestNewCertChainsAndLoads(t *testing.T) {
	ca := NewCert(t, "ca", nil, AsCA)
	leaf := NewCert(t, "localhost", &ca, func(c *x509.Certificate) { c.DNSNames = []string{"localhost"} })
	pool := x509.NewCertPool()
	pool.AddCert(ca.Leaf)
	if _, err := leaf.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "localhost"}); err != nil {
		t.Errorf("the leaf does not verify against its CA: %v", err)
	}
	other := NewCert(t, "other", nil, AsCA)
	if _, err := NewCert(t, "x", &other, nil).Leaf.Verify(x509.VerifyOptions{Roots: pool}); err == nil {
		t.Error("a certificate of another CA verifies")
	}
	certFile, keyFile := WriteCert(t, t.TempDir(), "localhost", leaf)
	loaded, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil || string(loaded.Certificate[0]) != string(leaf.Certificate[0]) {
		t.Errorf("the files load as another pair: %v", err)
	}
}
