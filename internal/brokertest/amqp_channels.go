package brokertest

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"testing"
)

// The fake AMQP port at work: ServeAMQP accepts the connections, and for
// each what it does with every frame after the handshake (amqp_server.go):
// the channels' methods, publishes and the deliveries to consumers.

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

// serve runs one connection: the handshake, then each frame the client
// sends and the deliveries that frame allows, until either side closes.
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

// handle answers one frame; an error ends the connection.
func (c *amqpConn) handle(fr frame) error {
	if fr.typ == frameHeartbeat {
		return nil
	}
	ch := c.chans[fr.channel]
	if fr.channel == 0 {
		return c.connMethod(fr)
	}
	if fr.typ != frameMethod {
		if ch == nil || ch.closing {
			return nil
		}
		return c.content(ch, fr)
	}
	f := &fields{b: fr.payload}
	id := f.methodID()
	if ch == nil {
		if id != mChanOpen {
			return c.closeConn(504, "CHANNEL_ERROR - expected 'channel.open'", id)
		}
		c.chans[fr.channel] = &amqpChan{id: fr.channel}
		return c.send(fr.channel, method(mChanOpenOk).longstr(""))
	}
	if ch.closing {
		if id == mChanCloseOk {
			delete(c.chans, fr.channel)
		}
		return nil
	}
	return c.chanMethod(ch, id, f)
}

// connMethod answers a method on channel 0: the client's close.
func (c *amqpConn) connMethod(fr frame) error {
	f := &fields{b: fr.payload}
	if fr.typ == frameMethod && f.methodID() == mConnClose {
		c.requeueAll() // before close-ok: a client that saw it finds them back
		_ = c.send(0, method(mConnCloseOk))
		return errClosed
	}
	return c.closeConn(540, "NOT_IMPLEMENTED - the fake has no such connection method", 0)
}

// chanMethod answers method id with fields f on the open channel ch.
func (c *amqpConn) chanMethod(ch *amqpChan, id uint32, f *fields) error {
	switch id {
	case mChanClose:
		c.requeue(ch)
		delete(c.chans, ch.id)
		return c.send(ch.id, method(mChanCloseOk))
	case mQueueDeclare:
		f.short()
		name := f.shortstr()
		if !f.bit(f.octet(), 0) {
			return c.closeChan(ch, 540, "NOT_IMPLEMENTED - the fake declares passively only", id)
		}
		n, ok, err := c.lookUp(ch, name, id)
		if !ok {
			return err
		}
		return c.send(ch.id, method(mQueueDeclareOk).shortstr(name).long(uint32(n)).long(0))
	case mQueuePurge:
		f.short()
		return c.purge(ch, f.shortstr(), id)
	case mBasicQos:
		f.long()
		ch.prefetch = int(f.short())
		return c.send(ch.id, method(mBasicQosOk))
	case mBasicConsume:
		f.short()
		return c.consume(ch, f.shortstr(), f.shortstr(), id)
	case mBasicCancel:
		tag := f.shortstr()
		ch.consumer = ""
		return c.send(ch.id, method(mBasicCancelOk).shortstr(tag))
	case mBasicPublish:
		f.short()
		ch.pub = &Publish{Vhost: c.vhost, Exchange: f.shortstr(), RoutingKey: f.shortstr()}
		ch.pub.Mandatory = f.bit(f.octet(), 0)
		return nil
	case mBasicAck:
		tag := f.longlong()
		return c.ack(ch, tag, f.bit(f.octet(), 0))
	case mConfirmSelect:
		ch.confirming = true
		return c.send(ch.id, method(mConfirmSelectOk))
	}
	return c.closeConn(540, fmt.Sprintf("NOT_IMPLEMENTED - the fake has no method %d.%d", id>>16, id&0xffff), id)
}

// closeChan closes ch with code and text (a channel error).
func (c *amqpConn) closeChan(ch *amqpChan, code uint16, text string, cause uint32) error {
	c.requeue(ch)
	ch.closing, ch.consumer = true, ""
	return c.send(ch.id, closeMethod(mChanClose, code, text, cause))
}

// lookUp finds queue name of the connection's vhost for method id: its
// ready count, or false having closed ch as RabbitMQ does (404 NOT_FOUND;
// 403 ACCESS_REFUSED for a refused queue, but to a passive declare).
func (c *amqpConn) lookUp(ch *amqpChan, name string, id uint32) (int, bool, error) {
	s := c.a.s
	s.mu.Lock()
	_, exists := s.queues[c.vhost][name]
	refused := c.a.refused[queueKey{c.vhost, name}]
	n := len(s.amqpQueue(queueKey{c.vhost, name}).ready)
	access := "access" // 3.10's wording
	if s.is4x() {
		access = "read access"
	}
	s.mu.Unlock()
	if refused && id != mQueueDeclare {
		return 0, false, c.closeChan(ch, 403, fmt.Sprintf("ACCESS_REFUSED - %s to queue '%s' in vhost '%s' refused for user '%s'", access, name, c.vhost, c.user), id)
	}
	if !exists {
		return 0, false, c.closeChan(ch, 404, fmt.Sprintf("NOT_FOUND - no queue '%s' in vhost '%s'", name, c.vhost), id)
	}
	return n, true, nil
}

// purge removes the ready messages of queue name and answers how many.
func (c *amqpConn) purge(ch *amqpChan, name string, id uint32) error {
	if _, ok, err := c.lookUp(ch, name, id); !ok {
		return err
	}
	s, k := c.a.s, queueKey{c.vhost, name}
	s.mu.Lock()
	q := s.amqpQueue(k)
	n := len(q.ready)
	q.ready = nil
	s.syncCount(k)
	s.mu.Unlock()
	return c.send(ch.id, method(mQueuePurgeOk).long(uint32(n)))
}

// consume makes ch the consumer of queue name with tag.
func (c *amqpConn) consume(ch *amqpChan, name, tag string, id uint32) error {
	if _, ok, err := c.lookUp(ch, name, id); !ok {
		return err
	}
	if tag == "" {
		tag = fmt.Sprintf("amq.ctag-fake-%d", ch.id)
	}
	ch.consumer, ch.queue = tag, queueKey{c.vhost, name}
	return c.send(ch.id, method(mBasicConsumeOk).shortstr(tag))
}

// ack settles the deliveries of ch up to tag (multiple) or tag alone; an
// unknown tag closes the channel (406 PRECONDITION_FAILED).
func (c *amqpConn) ack(ch *amqpChan, tag uint64, multiple bool) error {
	i := slices.IndexFunc(ch.unacked, func(d delivered) bool { return d.tag == tag })
	if i < 0 {
		return c.closeChan(ch, 406, fmt.Sprintf("PRECONDITION_FAILED - unknown delivery tag %d", tag), mBasicAck)
	}
	from := i
	if multiple {
		from = 0
	}
	n := i + 1 - from
	ch.unacked = slices.Delete(ch.unacked, from, i+1)
	s := c.a.s
	s.mu.Lock()
	s.amqpQueue(ch.queue).unacked -= n
	s.syncCount(ch.queue)
	s.mu.Unlock()
	return nil
}

// content takes the header and body frames of the publish on ch.
func (c *amqpConn) content(ch *amqpChan, fr frame) error {
	if ch.pub == nil {
		return c.closeConn(505, "UNEXPECTED_FRAME - content without a publish", 0)
	}
	if fr.typ == frameHeader {
		f := &fields{b: fr.payload}
		f.long() // class, weight
		ch.pubSize = f.longlong()
		ch.pub.Message.Props = slices.Clone(f.b)
	} else {
		ch.pub.Message.Body = append(ch.pub.Message.Body, fr.payload...)
	}
	if fr.typ == frameHeader && ch.pubSize > 0 || uint64(len(ch.pub.Message.Body)) < ch.pubSize {
		return nil
	}
	p := *ch.pub
	ch.pub = nil
	if ch.confirming {
		ch.seq++
	}
	return c.publish(ch, p)
}

// publish does with p what OnPublish decides, by default what RabbitMQ does.
func (c *amqpConn) publish(ch *amqpChan, p Publish) error {
	a, s := c.a, c.a.s
	s.mu.Lock()
	a.published++
	n, decide, until := a.published, a.onPublish, a.holdUntil
	s.mu.Unlock()
	fault := Route
	if decide != nil {
		fault = decide(n, p)
	}
	err := c.act(ch, p, fault)
	if n == until {
		a.ReleaseConfirms()
	}
	return err
}

// act does fault with p.
func (c *amqpConn) act(ch *amqpChan, p Publish, fault PublishFault) error {
	a, s := c.a, c.a.s
	k := queueKey{p.Vhost, p.RoutingKey}
	switch fault {
	case Nack:
		return c.confirm(ch, mBasicNack)
	case CloseConnection:
		return c.closeConn(320, "CONNECTION_FORCED - Closed via management plugin", 0)
	case CloseChannel:
		return c.closeChan(ch, 406, "PRECONDITION_FAILED - publish refused", mBasicPublish)
	case Hang:
		c.hung = true
		go func() {
			<-a.hang
			_ = c.nc.Close()
		}()
		return nil
	case Return:
		return c.returnMessage(ch, p)
	}
	s.mu.Lock()
	impersonator := a.impersonators[c.user]
	s.mu.Unlock()
	if uid := p.Message.UserID(); uid != "" && uid != c.user && !impersonator {
		return c.closeChan(ch, 406, fmt.Sprintf("PRECONDITION_FAILED - user_id property set to '%s' but authenticated user was '%s'", uid, c.user), mBasicPublish)
	}
	s.mu.Lock()
	_, exists := s.queues[k.vhost][k.name]
	if exists && p.Exchange == "" {
		q := s.amqpQueue(k)
		q.ready = append(q.ready, p.Message)
		s.syncCount(k)
	}
	if exists && fault == Hold && ch.confirming {
		a.held = append(a.held, heldConfirm{c: c, ch: ch.id, seq: ch.seq, id: mBasicAck})
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	if (!exists || p.Exchange != "") && p.Mandatory {
		return c.returnMessage(ch, p)
	}
	return c.confirm(ch, mBasicAck)
}

// returnMessage returns p as unroutable (312 NO_ROUTE), then confirms it.
func (c *amqpConn) returnMessage(ch *amqpChan, p Publish) error {
	ret := method(mBasicReturn).short(312).shortstr("NO_ROUTE").shortstr(p.Exchange).shortstr(p.RoutingKey)
	if err := c.sendContent(ch.id, ret, p.Message); err != nil {
		return err
	}
	return c.confirm(ch, mBasicAck)
}

// confirm acks or nacks the last publish of ch, when it is in confirm mode.
// Until the publish HoldConfirmsUntil names is handled, it is withheld.
func (c *amqpConn) confirm(ch *amqpChan, id uint32) error {
	if !ch.confirming {
		return nil
	}
	a := c.a
	a.s.mu.Lock()
	hold := a.published < a.holdUntil
	if hold {
		a.held = append(a.held, heldConfirm{c: c, ch: ch.id, seq: ch.seq, id: id})
	}
	a.s.mu.Unlock()
	if hold {
		return nil
	}
	return c.send(ch.id, method(id).longlong(ch.seq).octet(0))
}

// deliver sends each consuming channel the ready messages of its queue
// that its prefetch allows.
func (c *amqpConn) deliver() error {
	if c.hung {
		return nil
	}
	for _, id := range c.chanIDs() {
		ch := c.chans[id]
		if err := c.cancelIfGone(ch); err != nil {
			return err
		}
		for ch.consumer != "" && (ch.prefetch == 0 || len(ch.unacked) < ch.prefetch) {
			m, ok := c.take(ch.queue)
			if !ok {
				break
			}
			ch.tag++
			ch.unacked = append(ch.unacked, delivered{tag: ch.tag, msg: m})
			var redelivered uint8
			if m.redelivered {
				redelivered = 1
			}
			d := method(mBasicDeliver).shortstr(ch.consumer).longlong(ch.tag).octet(redelivered).shortstr("").shortstr(ch.queue.name)
			if err := c.sendContent(ch.id, d, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// cancelIfGone cancels the consumer of ch when its queue is gone, as
// RabbitMQ does (basic.cancel from the server).
func (c *amqpConn) cancelIfGone(ch *amqpChan) error {
	if ch.consumer == "" {
		return nil
	}
	c.a.s.mu.Lock()
	_, exists := c.a.s.queues[ch.queue.vhost][ch.queue.name]
	c.a.s.mu.Unlock()
	if exists {
		return nil
	}
	tag := ch.consumer
	ch.consumer = ""
	return c.send(ch.id, method(mBasicCancel).shortstr(tag).octet(1))
}

// take moves the head of queue k from ready to unacknowledged.
func (c *amqpConn) take(k queueKey) (Message, bool) {
	s := c.a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.amqpQueue(k)
	if len(q.ready) == 0 {
		return Message{}, false
	}
	m := q.ready[0]
	q.ready = q.ready[1:]
	q.unacked++
	return m, true
}
