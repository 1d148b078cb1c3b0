package brokertest

import (
	"net"
	"testing"
	"time"
)

// RawListener answers each loopback connection with answer, then closes it; it returns host:port.
func RawListener(t testing.TB, answer string) string {
	t.Helper()
	return serveLoopback(t, func(conn net.Conn) {
		defer func() { _ = conn.Close() }()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 512)
		_, _ = conn.Read(buf)
		_, _ = conn.Write([]byte(answer))
	})
}

// SilentListener accepts connections on a loopback port and never answers; it returns host:port.
func SilentListener(t testing.TB) string {
	t.Helper()
	return serveLoopback(t, func(conn net.Conn) { t.Cleanup(func() { _ = conn.Close() }) })
}

// serveLoopback hands each loopback connection to handle; it returns host:port.
func serveLoopback(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go handle(conn)
		}
	}()
	return l.Addr().String()
}

// SlowListener is RawListener answering only after after, counted from the connection.
func SlowListener(t testing.TB, answer string, after time.Duration) string {
	t.Helper()
	return serveLoopback(t, func(conn net.Conn) {
		defer func() { _ = conn.Close() }()
		time.Sleep(after)
		_, _ = conn.Write([]byte(answer))
	})
}
