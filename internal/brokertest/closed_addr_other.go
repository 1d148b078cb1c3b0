//go:build !unix

package brokertest

import (
	"net"
	"testing"
)

// ClosedAddr is a loopback host:port nothing listens on: the port of a listener closed at once
// (where sockets cannot be held bound without listening, a later listener may take it).
func ClosedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}
