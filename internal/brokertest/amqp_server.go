package brokertest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
)

// AMQP is the fake broker's AMQP 0-9-1 port, for unit tests of what the
// provider does over AMQP (amqp091-go as the client): the handshake with
// SASL PLAIN, channels, queue.declare (passive), queue.purge, basic.qos,
// basic.consume and deliveries, basic.ack from the client, publisher
// confirms, mandatory publishes to the default exchange with basic.return,
// the closes RabbitMQ sends, and the cancel of a consumer whose queue is
// gone (checked after each frame the client sends). Its queues are the management fake's: a
// message published over AMQP counts in the queue's messages there. Tests
// inject faults with OnPublish and Refuse, and grant the impersonator tag with Impersonator.
// What the mover relies on is held to real brokers by the AMQP contract
// (TestFakeAMQPContract in internal/provider).
//
// Its limits: the default exchange only; queue.declare is passive only;
// one consumer per channel, served by the connection that consumes (a
// publish on another connection reaches it at that connection's next
// frame); no heartbeats from the fake (the client's 10 s heartbeat reads
// nothing for 30 s, longer than a unit test); no flow control, blocking,
// transactions or client nacks.
type AMQP struct {
	s    *Server
	addr string

	// Under s.mu.
	login   *[2]string // the one username and password accepted; nil accepts any
	logins  [][2]string
	refused map[queueKey]bool
	// impersonators may publish any user_id (Impersonator).
	impersonators map[string]bool
	onPublish     func(n int, p Publish) PublishFault
	published     int
	held          []heldConfirm
	holdUntil     int // HoldConfirmsUntil
	hang          chan struct{}
}

// queueKey names a queue of a vhost.
type queueKey struct{ vhost, name string }

// amqpQueue is what a queue holds for the AMQP side.
type amqpQueue struct {
	ready   []Message
	unacked int
}

// Message is a message of a queue: its properties as written on the wire
// (Props, replayed unchanged to a consumer) and its body. PutMessages
// writes a message id and a user id into Props; ID and UserID read them.
type Message struct {
	Props []byte
	Body  []byte
	// redelivered: delivered before and requeued, as the redelivered flag
	// of its next delivery says.
	redelivered bool
}

// NewMessage is a message with that message id, user id (either may be
// empty) and body.
func NewMessage(id, userID, body string) Message {
	return Message{Props: encodeProps(id, userID), Body: []byte(body)}
}

// ID is the message's message-id property.
func (m Message) ID() string { return m.prop(propMessageID) }

// UserID is the message's user-id property.
func (m Message) UserID() string { return m.prop(propUserID) }

func (m Message) prop(i int) string {
	p, _ := props(m.Props).shortstrs()
	return p[i]
}

// Publish is a publish the fake received, as OnPublish sees it.
type Publish struct {
	Vhost, Exchange, RoutingKey string
	Mandatory                   bool
	Message                     Message
}

// PublishFault is what the fake does with a publish (OnPublish).
type PublishFault int

const (
	// Route: route it to the queue its routing key names, and confirm it
	// (a mandatory publish to no queue is returned first), as RabbitMQ does.
	Route PublishFault = iota
	// Nack: drop it and nack it.
	Nack
	// Return: return it as unroutable (312 NO_ROUTE) and confirm it,
	// wherever its routing key points.
	Return
	// Hold: route it, and send its confirm only at ReleaseConfirms.
	Hold
	// CloseConnection: drop it and close the connection (320
	// CONNECTION_FORCED, as from the management UI) instead of confirming.
	CloseConnection
	// Hang: drop it, and stop answering on that connection without closing
	// it (a broker that hangs), until the test ends or Unhang: each frame
	// the client sends then gets a heartbeat and nothing else, as from a
	// RabbitMQ whose heartbeat sender (a process apart) outlives the rest.
	Hang
	// CloseChannel: drop it and close its channel (406 PRECONDITION_FAILED,
	// as RabbitMQ refuses a publish, e.g. with another user's user_id); the
	// connection stays open.
	CloseChannel
)

type heldConfirm struct {
	c   *amqpConn
	ch  uint16
	seq uint64
	id  uint32 // ack or nack
}

// ServeAMQP starts the fake's AMQP port on loopback, closed at the end of
// the test.
func (s *Server) ServeAMQP(t testing.TB) *AMQP {
	t.Helper()
	a := &AMQP{s: s, refused: map[queueKey]bool{}, hang: make(chan struct{})}
	s.mu.Lock()
	if s.amqpQueues == nil {
		s.amqpQueues = map[queueKey]*amqpQueue{}
	}
	s.mu.Unlock()
	t.Cleanup(a.Unhang)
	a.addr = serveLoopback(t, func(conn net.Conn) {
		c := &amqpConn{a: a, nc: conn, r: bufio.NewReader(conn), chans: map[uint16]*amqpChan{}}
		c.serve()
	})
	return a
}

// URL is the port's amqp:// URL, without credentials or vhost.
func (a *AMQP) URL() string { return "amqp://" + a.addr }

// Addr is the port's address, host:port.
func (a *AMQP) Addr() string { return a.addr }

// Login makes the port accept only user with password (by default it
// accepts any): another login is refused as RabbitMQ refuses it, closing
// the connection.
func (a *AMQP) Login(user, password string) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	a.login = &[2]string{user, password}
}

// Logins returns the username and password of each handshake so far.
func (a *AMQP) Logins() [][2]string {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	return slices.Clone(a.logins)
}

// Refuse makes every purge and consume of queue in vhost fail with 403
// ACCESS_REFUSED, as for a user without read permission on it (a passive
// declare needs none).
func (a *AMQP) Refuse(vhost, queue string) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	a.refused[queueKey{vhost, queue}] = true
}

// Impersonator lets user publish a message whose user_id is another user's,
// as RabbitMQ's impersonator tag does; any other user's such publish closes
// its channel (406 PRECONDITION_FAILED), as RabbitMQ does.
func (a *AMQP) Impersonator(user string) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if a.impersonators == nil {
		a.impersonators = map[string]bool{}
	}
	a.impersonators[user] = true
}

// OnPublish has f decide what the fake does with each publish: n counts the
// publishes the port received, from 1. f runs on the connection's
// goroutine, before the fake does anything with the publish; it may change
// the fake (e.g. remove a queue).
func (a *AMQP) OnPublish(f func(n int, p Publish) PublishFault) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	a.onPublish = f
}

// ReleaseConfirms sends the confirms that Hold withheld, in order.
func (a *AMQP) ReleaseConfirms() {
	a.s.mu.Lock()
	held := a.held
	a.held = nil
	a.s.mu.Unlock()
	for _, h := range held {
		_ = h.c.send(h.ch, method(h.id).longlong(h.seq).octet(0))
	}
}

// HoldConfirmsUntil withholds every confirm until the fake has handled the
// nth publish (routed, returned, ...), then sends them in order, from the
// connection's goroutine: a client sees all that came before them first.
func (a *AMQP) HoldConfirmsUntil(n int) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	a.holdUntil = n
}

// Unhang ends every Hang: those connections close.
func (a *AMQP) Unhang() {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	select {
	case <-a.hang:
	default:
		close(a.hang)
	}
}

// PutMessages appends msgs to the ready messages of queue in vhost, which
// must exist; its message count in the management API follows.
func (s *Server) PutMessages(vhost, queue string, msgs ...Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.amqpQueue(queueKey{vhost, queue})
	q.ready = append(q.ready, msgs...)
	s.syncCount(queueKey{vhost, queue})
}

// Messages returns the ready messages of queue in vhost, in order.
func (s *Server) Messages(vhost, queue string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.amqpQueue(queueKey{vhost, queue}).ready)
}

// amqpQueue is the AMQP side of queue k, under s.mu.
func (s *Server) amqpQueue(k queueKey) *amqpQueue {
	if s.amqpQueues == nil {
		s.amqpQueues = map[queueKey]*amqpQueue{}
	}
	q := s.amqpQueues[k]
	if q == nil {
		q = &amqpQueue{}
		s.amqpQueues[k] = q
	}
	return q
}

// syncCount sets the management API's message count of k (ready and
// unacknowledged, as RabbitMQ's messages), under s.mu.
func (s *Server) syncCount(k queueKey) {
	if q, ok := s.queues[k.vhost][k.name]; ok {
		aq := s.amqpQueue(k)
		q.Messages = Count(int64(len(aq.ready) + aq.unacked))
	}
}

// amqpConn is one client connection.
type amqpConn struct {
	a     *AMQP
	nc    net.Conn
	r     *bufio.Reader
	wmu   sync.Mutex
	vhost string
	user  string // who logged in
	chans map[uint16]*amqpChan
	hung  bool // Hang: frames get a heartbeat, nothing else
}

type amqpChan struct {
	id       uint16
	closing  bool // the fake closed it and awaits close-ok
	confirm  bool
	seq      uint64 // publishes since confirm.select
	prefetch int
	consumer string // its one consumer's tag, "" for none
	queue    queueKey
	tag      uint64 // the last delivery tag
	unacked  []delivered
	pub      *Publish // the publish whose content is arriving
	pubSize  uint64
}

type delivered struct {
	tag uint64
	msg Message
}

// errClosed ends a connection the fake closed.
var errClosed = errors.New("closed by the fake")

func (c *amqpConn) serve() {
	defer func() { _ = c.nc.Close() }()
	defer c.requeueAll()
	if err := c.handshake(); err != nil {
		return
	}
	for {
		f, err := readFrame(c.r)
		if err != nil {
			return
		}
		if c.hung {
			if err := c.heartbeat(); err != nil {
				return
			}
			continue
		}
		if err := c.handle(f); err != nil {
			return
		}
		if err := c.deliver(); err != nil {
			return
		}
	}
}

// handshake reads the protocol header and runs start, tune and open.
func (c *amqpConn) handshake() error {
	hdr := make([]byte, 8)
	if _, err := io.ReadFull(c.r, hdr); err != nil {
		return err
	}
	if string(hdr) != "AMQP\x00\x00\x09\x01" {
		_, _ = c.nc.Write([]byte(AMQPGreeting))
		return errClosed
	}
	start := method(mConnStart).octet(0).octet(9).long(0).longstr("PLAIN AMQPLAIN").longstr("en_US")
	if err := c.send(0, start); err != nil {
		return err
	}
	f, err := c.expect(mConnStartOk)
	if err != nil {
		return err
	}
	f.table()
	f.shortstr()
	// PLAIN: authorization id, username, password, each ended by NUL.
	parts := strings.SplitN(f.longstr(), "\x00", 3)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	return c.login(parts[1], parts[2])
}

// login checks the credentials, then tunes and opens the vhost.
func (c *amqpConn) login(user, pass string) error {
	c.user = user
	c.a.s.mu.Lock()
	c.a.logins = append(c.a.logins, [2]string{user, pass})
	refused := c.a.login != nil && *c.a.login != [2]string{user, pass}
	c.a.s.mu.Unlock()
	if refused { // without a word, as RabbitMQ to a client that lacks authentication_failure_close
		return errClosed
	}
	if err := c.send(0, method(mConnTune).short(2047).long(fakeFrameMax).short(0)); err != nil {
		return err
	}
	if _, err := c.expect(mConnTuneOk); err != nil {
		return err
	}
	f, err := c.expect(mConnOpen)
	if err != nil {
		return err
	}
	c.vhost = f.shortstr()
	c.a.s.mu.Lock()
	_, ok := c.a.s.vhosts[c.vhost]
	c.a.s.mu.Unlock()
	if !ok {
		return c.closeConn(530, fmt.Sprintf("NOT_ALLOWED - vhost %s not found", c.vhost), mConnOpen)
	}
	return c.send(0, method(mConnOpenOk).shortstr(""))
}

// expect reads the next frame, which must be method id on channel 0.
func (c *amqpConn) expect(id uint32) (*fields, error) {
	fr, err := readFrame(c.r)
	if err != nil {
		return nil, err
	}
	f := &fields{b: fr.payload}
	if fr.typ != frameMethod || f.methodID() != id {
		return nil, fmt.Errorf("want method %x, got frame %d", id, fr.typ)
	}
	return f, nil
}

// closeMethod is a connection.close or channel.close.
func closeMethod(id uint32, code uint16, text string, cause uint32) *args {
	return method(id).short(code).shortstr(text).short(uint16(cause >> 16)).short(uint16(cause))
}

// closeConn closes the connection with code and text, as RabbitMQ does:
// connection.close, then the client's close-ok (other frames ignored).
func (c *amqpConn) closeConn(code uint16, text string, cause uint32) error {
	c.requeueAll() // before the close: a client that saw it finds them back
	if err := c.send(0, closeMethod(mConnClose, code, text, cause)); err != nil {
		return err
	}
	for {
		fr, err := readFrame(c.r)
		if err != nil {
			return err
		}
		if f := (&fields{b: fr.payload}); fr.typ == frameMethod && fr.channel == 0 && f.methodID() == mConnCloseOk {
			return errClosed
		}
	}
}

// send writes one method frame.
func (c *amqpConn) send(ch uint16, a *args) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.nc.Write(frame{typ: frameMethod, channel: ch, payload: a.b}.bytes())
	return err
}

// heartbeat writes a heartbeat frame.
func (c *amqpConn) heartbeat() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.nc.Write(frame{typ: frameHeartbeat}.bytes())
	return err
}

// sendContent writes a method with its content header and body.
func (c *amqpConn) sendContent(ch uint16, a *args, m Message) error {
	hdr := method(60 << 16).longlong(uint64(len(m.Body))).b
	b := frame{typ: frameMethod, channel: ch, payload: a.b}.bytes()
	b = append(b, frame{typ: frameHeader, channel: ch, payload: append(hdr, m.Props...)}.bytes()...)
	for body := m.Body; len(body) > 0; {
		n := min(len(body), fakeFrameMax-8)
		b = append(b, frame{typ: frameBody, channel: ch, payload: body[:n]}.bytes()...)
		body = body[n:]
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.nc.Write(b)
	return err
}
