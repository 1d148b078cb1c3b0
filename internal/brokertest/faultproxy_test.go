package brokertest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// sink is a server that reads each connection to its end and reports what
// it read and how the read ended.
type sinkResult struct {
	n   int
	err error
}

func newSink(t *testing.T) (string, <-chan sinkResult) {
	out := make(chan sinkResult, 4)
	return serveLoopback(t, func(conn net.Conn) {
		defer func() { _ = conn.Close() }()
		n, err := io.Copy(io.Discard, conn)
		out <- sinkResult{int(n), err}
	}), out
}

// newEcho is a server that writes back what it reads.
func newEcho(t *testing.T) string {
	return serveLoopback(t, func(conn net.Conn) { _, _ = io.Copy(conn, conn); _ = conn.Close() })
}

// startProxy is a FaultProxy to target armed with f, and a dial through it; the proxy and the
// connections close when the test ends.
func startProxy(t *testing.T, target string, f Fault) (*FaultProxy, func() net.Conn) {
	t.Helper()
	p := orFatal(NewFaultProxy(target))(t)
	t.Cleanup(p.Close)
	p.Arm(f)
	return p, func() net.Conn {
		conn := orFatal(net.Dial("tcp", p.Addr))(t)
		t.Cleanup(func() { _ = conn.Close() })
		return conn
	}
}

// A reset strikes at the byte offset exactly: the far end reads that many
// bytes, then a reset; so does the near end.
func TestFaultProxy_resetAtOffset(t *testing.T) {
	target, got := newSink(t)
	p, dial := startProxy(t, target, Fault{Kind: FaultReset, After: 40000})
	conn := dial()
	_, _ = conn.Write(make([]byte, 100000)) // may fail once the reset lands
	r := <-got
	if r.n != 40000 || !errors.Is(r.err, syscall.ECONNRESET) {
		t.Fatalf("the far end read %d bytes, then %v; want 40000, then a reset", r.n, r.err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the near end read %v, want a reset", err)
	}
	select {
	case <-p.Struck():
	default:
		t.Fatal("Struck not closed")
	}
}

// Half-open: after the offset nothing passes, and neither end sees its
// socket closed, until Heal resets both.
func TestFaultProxy_halfOpen(t *testing.T) {
	target := newEcho(t)
	p, dial := startProxy(t, target, Fault{Kind: FaultHalfOpen, After: 2000})
	conn := dial()
	// 1000 bytes out and their 1000 back: the offset, exactly.
	if _, err := conn.Write(make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(conn, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	<-p.Struck()
	if _, err := conn.Write([]byte("more")); err != nil {
		t.Fatalf("writing to a half-open connection: %v", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := conn.Read(make([]byte, 10)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a half-open connection answered: %d bytes, %v", n, err)
	}
	p.Heal()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 10)); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("after Heal the half-open connection read %v, want a reset", err)
	}
	// After Heal, new connections pass.
	conn = dial()
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(conn, make([]byte, 4)); err != nil {
		t.Fatalf("after Heal: %v", err)
	}
}

// Latency delays each way: a round trip after the offset takes at least
// twice the latency, and the bytes arrive unchanged.
func TestFaultProxy_latency(t *testing.T) {
	target := newEcho(t)
	p, dial := startProxy(t, target, Fault{Kind: FaultLatency, After: 4, Latency: 100 * time.Millisecond})
	conn := dial()
	roundTrip := func(msg string) time.Duration {
		start := time.Now()
		if _, err := conn.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(msg))
		if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != msg {
			t.Fatalf("read back %q, %v; want %q", buf, err, msg)
		}
		return time.Since(start)
	}
	roundTrip("ab") // 4 bytes both ways: the offset
	if d := roundTrip("hello"); d < 200*time.Millisecond {
		t.Fatalf("a round trip with 100 ms latency each way took %v", d)
	}
	p.Heal()
	roundTrip("healed")
}

// The bandwidth limit holds the bytes after the offset to the rate.
func TestFaultProxy_bandwidth(t *testing.T) {
	target, got := newSink(t)
	_, dial := startProxy(t, target, Fault{Kind: FaultBandwidth, After: 1000, Rate: 100000})
	conn := dial()
	start := time.Now()
	data := bytes.Repeat([]byte("x"), 51000)
	if _, err := conn.Write(data); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close()
	r := <-got
	if r.n != len(data) {
		t.Fatalf("the far end read %d bytes (%v), want %d", r.n, r.err, len(data))
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Fatalf("50,000 bytes at 100,000 bytes/s passed in %v", d)
	}
}

// Skip lets the first connections to reach the offset through, and the
// fault strikes the next one only.
func TestFaultProxy_skip(t *testing.T) {
	target, got := newSink(t)
	_, dial := startProxy(t, target, Fault{Kind: FaultReset, After: 100, Skip: 1})
	for i, want := range []int{500, 100, 500} {
		conn := dial()
		_, _ = conn.Write(make([]byte, 500))
		_ = conn.Close()
		if r := <-got; r.n != want {
			t.Fatalf("connection %d: the far end read %d bytes (%v), want %d", i, r.n, r.err, want)
		}
	}
}

// Pause holds the traffic at the offset until Heal, then passes on every
// byte held, in order.
func TestFaultProxy_pause(t *testing.T) {
	target := newEcho(t)
	p, dial := startProxy(t, target, Fault{Kind: FaultPause, After: 8})
	conn := dial()
	if _, err := conn.Write([]byte("abcd")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(conn, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	<-p.Struck()
	if _, err := conn.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := conn.Read(make([]byte, 4)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a paused connection answered: %d bytes, %v", n, err)
	}
	p.Heal()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 4)
	if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "held" {
		t.Fatalf("after Heal the paused connection read %q, %v; want \"held\"", buf, err)
	}
}
