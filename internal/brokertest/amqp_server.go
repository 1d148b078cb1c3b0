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
// What the mover relies on is held to real brokers by the AMQP rows of the
// fake's contract (TestFakeContract in internal/provider).
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
	id         uint16
	closing    bool   // the fake closed it and awaits close-ok
	confirming bool   // confirm.select was sent: publishes get confirms
	seq        uint64 // publishes since confirm.select
	prefetch   int
	consumer   string // its one consumer's tag, "" for none
	queue      queueKey
	tag        uint64 // the last delivery tag
	unacked    []delivered
	pub        *Publish // the publish whose content is arriving
	pubSize    uint64
}

type delivered struct {
	tag uint64
	msg Message
}

// errClosed ends a connection the fake closed.
var errClosed = errors.New("closed by the fake")

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

// AMQPGreeting is what RabbitMQ's AMQP port answers to anything not AMQP: the protocol header.
const AMQPGreeting = "AMQP\x00\x00\t\x01"

// requeue puts the unacknowledged deliveries of ch back at the head of its
// queue, in order, as RabbitMQ does when a channel closes.
func (c *amqpConn) requeue(ch *amqpChan) {
	if len(ch.unacked) == 0 {
		return
	}
	s := c.a.s
	s.mu.Lock()
	q := s.amqpQueue(ch.queue)
	msgs := make([]Message, 0, len(ch.unacked))
	for _, d := range ch.unacked {
		d.msg.redelivered = true
		msgs = append(msgs, d.msg)
	}
	q.ready = append(msgs, q.ready...)
	q.unacked -= len(ch.unacked)
	s.syncCount(ch.queue)
	s.mu.Unlock()
	ch.unacked = nil
}

func (c *amqpConn) requeueAll() {
	for _, id := range c.chanIDs() {
		c.requeue(c.chans[id])
	}
}

// chanIDs are the numbers of the open channels, in order.
func (c *amqpConn) chanIDs() []uint16 {
	ids := make([]uint16, 0, len(c.chans))
	for id := range c.chans {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
