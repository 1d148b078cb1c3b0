package brokertest

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// FaultKind is what a FaultProxy does to a connection once its fault strikes.
type FaultKind int

const (
	// FaultReset closes both sockets of the connection with a TCP reset
	// (RST), exactly at the byte offset: nothing after it is forwarded.
	FaultReset FaultKind = iota + 1
	// FaultLatency delays every byte after the offset by Fault.Latency, each
	// way (pipelined, as a long link: the throughput stays).
	FaultLatency
	// FaultHalfOpen stops forwarding both ways without closing either
	// socket: each end sees a peer that stopped answering.
	FaultHalfOpen
	// FaultBandwidth limits each direction to Fault.Rate bytes a second.
	FaultBandwidth
	// FaultPause holds the traffic both ways, as FaultHalfOpen, until Heal,
	// which passes on what was held: it keeps an operation at a known point
	// while the test does something else (stops a node).
	FaultPause
)

func (k FaultKind) String() string {
	switch k {
	case FaultReset:
		return "reset"
	case FaultLatency:
		return "latency"
	case FaultHalfOpen:
		return "half-open"
	case FaultBandwidth:
		return "bandwidth"
	case FaultPause:
		return "pause"
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// Fault is a fault a FaultProxy applies to the connections it forwards.
type Fault struct {
	Kind FaultKind
	// After is the offset at which the fault strikes: the bytes a connection
	// has forwarded, both ways together, since it opened.
	After int64
	// Skip lets that many connections reach After untouched first (e.g. the
	// second of two moves on connections of their own).
	Skip int
	// All strikes every connection that reaches After, not only the first.
	All bool
	// Latency is FaultLatency's delay each way.
	Latency time.Duration
	// Rate is FaultBandwidth's limit each way, in bytes a second.
	Rate int
}

// FaultProxy is a TCP proxy on a loopback port in front of one address
// (an AMQP port, a management API) that applies an armed Fault at a byte
// offset of the traffic: a test places the fault inside an operation by the
// bytes exchanged, never by the clock.
type FaultProxy struct {
	// Addr is where the proxy listens, host:port.
	Addr   string
	target string
	ln     net.Listener

	mu      sync.Mutex
	fault   *Fault
	reached int           // connections that reached fault.After
	struck  chan struct{} // closed when the fault first strikes
	at      time.Time     // when it first struck
	healed  chan struct{} // closed by Heal: half-open connections end
	closed  chan struct{} // closed by Close
	conns   map[*faultConn]struct{}
}

// NewFaultProxy starts a proxy to target (host:port) on 127.0.0.1; Close
// stops it.
func NewFaultProxy(target string) (*FaultProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &FaultProxy{Addr: ln.Addr().String(), target: target, ln: ln, struck: make(chan struct{}),
		healed: make(chan struct{}), closed: make(chan struct{}), conns: map[*faultConn]struct{}{}}
	go p.accept()
	return p, nil
}

// Arm sets the fault for the connections open and to come, counting their
// bytes from when each opened.
func (p *FaultProxy) Arm(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault, p.reached = &f, 0
	p.struck, p.at = make(chan struct{}), time.Time{}
	p.healed = make(chan struct{})
}

// Struck is closed once the armed fault first strikes.
func (p *FaultProxy) Struck() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.struck
}

// StruckAt is when the armed fault first struck (zero before).
func (p *FaultProxy) StruckAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.at
}

// Heal disarms the fault: connections held half-open are reset (their
// peers learn it at once instead of at their next timeout), paused ones
// resume, latency and rate limits stop, and new connections pass untouched.
func (p *FaultProxy) Heal() {
	p.mu.Lock()
	p.fault = nil
	close(p.healed)
	var held []*faultConn
	for c := range p.conns {
		if c.mode() == FaultHalfOpen {
			held = append(held, c)
		}
		c.setMode(0)
	}
	p.healed = make(chan struct{})
	p.mu.Unlock()
	for _, c := range held {
		c.reset()
	}
}

// Close stops listening and resets every connection.
func (p *FaultProxy) Close() {
	if p.ln.Close() != nil {
		return // closed before
	}
	close(p.closed)
	p.mu.Lock()
	conns := make([]*faultConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.reset()
	}
}

func (p *FaultProxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			resetConn(client)
			continue
		}
		c := &faultConn{p: p, client: client, up: up}
		p.mu.Lock()
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		go c.pump(client, up)
		go c.pump(up, client)
	}
}

// faultConn is one forwarded connection.
type faultConn struct {
	p          *FaultProxy
	client, up net.Conn

	mu        sync.Mutex
	forwarded int64     // bytes read, both ways
	kind      FaultKind // the fault applied to it, 0 for none
	latency   time.Duration
	rate      int
	closeOnce sync.Once
}

func (c *faultConn) mode() FaultKind {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kind
}

func (c *faultConn) setMode(k FaultKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kind = k
}

// chunk is what one side read, and when, with the fault that struck at its
// end (0 for none).
type chunk struct {
	data   []byte
	at     time.Time
	strike FaultKind
}

// pump forwards from src to dst: a reader splits what it reads at the
// fault's offset and queues it; the writer applies the connection's fault.
func (c *faultConn) pump(src, dst net.Conn) {
	queue := make(chan chunk, 256)
	go func() {
		defer close(queue)
		buf := make([]byte, 32*1024)
		for {
			n, err := src.Read(buf)
			for data := buf[:n]; len(data) > 0; {
				take, strike := c.account(len(data))
				queue <- chunk{data: append([]byte(nil), data[:take]...), at: time.Now(), strike: strike}
				data = data[take:]
			}
			if err != nil {
				return
			}
		}
	}()
	var next time.Time // bandwidth: when the next byte may go
	for ch := range queue {
		if !c.write(dst, ch, &next) {
			drain(queue) // the reader ends once the sockets close
			return
		}
	}
	// src closed or failed: pass the close on.
	c.shut(false)
}

// account counts n bytes read and returns how many of them come before the
// armed fault strikes this connection (all of them when it does not), and
// the fault that strikes after them.
func (c *faultConn) account(n int) (int, FaultKind) {
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	f := p.fault
	before := c.forwarded
	if f == nil || c.kind != 0 || before >= f.After && before > 0 || before+int64(n) < f.After {
		c.forwarded += int64(n)
		return n, 0
	}
	take := int(f.After - before)
	c.forwarded += int64(take)
	p.reached++
	if p.reached <= f.Skip || !f.All && p.reached > f.Skip+1 {
		c.forwarded += int64(n - take)
		return n, 0
	}
	c.kind, c.latency, c.rate = f.Kind, f.Latency, f.Rate
	if p.at.IsZero() {
		p.at = time.Now()
		close(p.struck)
	}
	return take, f.Kind
}

// write sends ch to dst under the connection's fault; false once the
// connection is done.
func (c *faultConn) write(dst net.Conn, ch chunk, next *time.Time) bool {
	if len(ch.data) > 0 {
		c.mu.Lock()
		kind, latency, rate := c.kind, c.latency, c.rate
		c.mu.Unlock()
		if (kind == FaultHalfOpen || kind == FaultPause) && ch.strike == 0 {
			c.hold()
			if kind == FaultHalfOpen {
				return false // Heal and Close reset it
			}
		}
		if kind == FaultLatency {
			time.Sleep(time.Until(ch.at.Add(latency)))
		}
		if kind == FaultBandwidth && rate > 0 {
			*next = maxTime(*next, time.Now()).Add(time.Duration(len(ch.data)) * time.Second / time.Duration(rate))
			time.Sleep(time.Until(*next))
		}
		if _, err := dst.Write(ch.data); err != nil {
			c.reset()
			return false
		}
	}
	if ch.strike == FaultReset {
		c.reset()
		return false
	}
	return true
}

// hold blocks a half-open connection's writer until Heal or Close.
func (c *faultConn) hold() {
	c.p.mu.Lock()
	healed := c.p.healed
	c.p.mu.Unlock()
	select {
	case <-healed:
	case <-c.p.closed:
	}
}

// reset closes both sockets with an RST, once.
func (c *faultConn) reset() { c.shut(true) }

// shut closes both sockets, with an RST when rst, once.
func (c *faultConn) shut(rst bool) {
	c.closeOnce.Do(func() {
		for _, conn := range []net.Conn{c.client, c.up} {
			if tc, ok := conn.(*net.TCPConn); ok && rst {
				_ = tc.SetLinger(0)
			}
			_ = conn.Close()
		}
		c.p.mu.Lock()
		delete(c.p.conns, c)
		c.p.mu.Unlock()
		c.mu.Lock()
		c.kind = 0
		c.mu.Unlock()
	})
}

// resetConn closes conn with a TCP reset rather than a FIN.
func resetConn(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// drain reads queue to its end.
func drain(queue <-chan chunk) {
	for range queue {
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
