package brokertest

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// The closed address refuses connections, and no listener the test opens later can take its port.
func TestClosedAddrStaysClosed(t *testing.T) {
	addr := ClosedAddr(t)
	if l, err := net.Listen("tcp", addr); err == nil {
		_ = l.Close()
		t.Fatalf("a listener took %s, the closed address", addr)
	}
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		_ = conn.Close()
		t.Fatalf("a connection to %s opened", addr)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("a connection to %s: %v, want connection refused", addr, err)
	}
}
