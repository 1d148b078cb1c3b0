package brokertest

import (
	"net"
	"testing"
	"time"
)

// AMQPGreeting is what RabbitMQ's AMQP port answers to anything that is not
// AMQP, an HTTP request included: the protocol header it speaks.
const AMQPGreeting = "AMQP\x00\x00\t\x01"

// RawListener listens on a loopback port, closed at the end of the test, and
// answers each connection with answer after reading what the client sends,
// then closes it: a port that is not the management API (RabbitMQ's AMQP
// port, a TLS port). It returns the address, host:port.
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

// ClosedAddr is a loopback address, host:port, that nothing listens on: a
// connection to it is refused.
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

// SilentListener accepts connections on a loopback port and never answers
// (a broker that hangs); closed at the end of the test. It returns the
// address, host:port.
func SilentListener(t testing.TB) string {
	t.Helper()
	return serveLoopback(t, func(conn net.Conn) { t.Cleanup(func() { _ = conn.Close() }) })
}

// serveLoopback listens on a loopback port, closed at the end of the test,
// hands each connection to handle in a goroutine of its own, and returns the
// address, host:port.
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

// SlowListener listens on a loopback port, closed at the end of the test,
// and answers each connection with answer after (counted from the
// connection), then closes it: a port slow to speak. It returns the address,
// host:port.
func SlowListener(t testing.TB, answer string, after time.Duration) string {
	t.Helper()
	return serveLoopback(t, func(conn net.Conn) {
		defer func() { _ = conn.Close() }()
		time.Sleep(after)
		_, _ = conn.Write([]byte(answer))
	})
}
