package mover

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Move moves the messages ready on mv.From when it begins (at most mv.Limit) to mv.To: each is
// published to the default exchange with routing key mv.To, mandatory, with its body, properties
// and headers, under publisher confirms, and acknowledged on mv.From only after its confirm and
// only when no return came. It returns how many it moved; any failure once it counted mv.From
// stops it with a *MoveError (before, an *Error), leaving every message not confirmed on mv.From.
// Config.Wrote is called before and after it, as for Purge. The decisions are moveCore's
// (core.go); this is the AMQP loop that feeds it.
func (m *Mover) Move(ctx context.Context, mv Move) (int, error) {
	m.wrote()
	defer m.wrote()
	var user string
	var impersonator bool
	if m.cfg.Whoami != nil {
		user, impersonator = m.cfg.Whoami(ctx)
	}
	conn, err := m.dial(ctx, mv.Vhost, "terraform-provider-queuey redrive "+mv.From)
	if err != nil {
		return 0, err
	}
	defer m.close(conn)
	l, err := m.start(conn.Connection, mv, user, impersonator)
	if err != nil || l.core.Total() == 0 {
		return 0, err
	}
	return l.run(ctx)
}

// moveLoop is the AMQP side of one move in progress.
type moveLoop struct {
	mv         Move
	core       *moveCore
	pub, con   *amqp.Channel
	deliveries <-chan amqp.Delivery
	delivery   amqp.Delivery // the last one fed to the core
	returns    chan amqp.Return
	cancels    chan string // the broker cancelled the consumer
	closed     chan *amqp.Error
	unfed      []inflight // published, confirm not yet fed to the core, in order
}

type inflight struct {
	tag uint64
	dc  *amqp.DeferredConfirmation
}

// start counts mv.From's ready messages, checks that mv.To exists, and opens the publishing
// channel (confirms, returns) and the consuming one.
func (m *Mover) start(conn *amqp.Connection, mv Move, user string, impersonator bool) (*moveLoop, error) {
	l := &moveLoop{mv: mv, closed: conn.NotifyClose(make(chan *amqp.Error, 1))}
	var err error
	if l.con, err = conn.Channel(); err != nil {
		return nil, m.channelError("opening a channel", mv.Vhost, mv.From, err)
	}
	q, err := l.con.QueueDeclarePassive(mv.From, true, false, false, false, nil)
	if err != nil {
		return nil, m.channelError(fmt.Sprintf("counting the messages of %q", mv.From), mv.Vhost, mv.From, err)
	}
	if l.pub, err = conn.Channel(); err != nil {
		return nil, m.channelError("opening a channel", mv.Vhost, mv.To, err)
	}
	if _, err = l.pub.QueueDeclarePassive(mv.To, true, false, false, false, nil); err != nil {
		return nil, m.channelError(fmt.Sprintf("looking up %q", mv.To), mv.Vhost, mv.To, err)
	}
	l.core = newMoveCore(mv, m.cfg.URL, q.Messages, user, impersonator, time.Now())
	if l.core.Total() == 0 {
		return l, nil
	}
	return l, m.consume(l)
}

// consume enables the confirms and returns of l's publishing channel, and consumes from mv.From.
func (m *Mover) consume(l *moveLoop) error {
	mv := l.mv
	if err := l.pub.Confirm(false); err != nil {
		return l.core.Unstarted(m.channelError("enabling publisher confirms", mv.Vhost, mv.To, err))
	}
	// Buffered beyond the window: the library's reader never waits on it.
	l.returns = l.pub.NotifyReturn(make(chan amqp.Return, Window+1))
	if err := l.con.Qos(l.core.Prefetch(), 0, false); err != nil {
		return l.core.Unstarted(m.channelError("setting the prefetch", mv.Vhost, mv.From, err))
	}
	// Buffered: the library sends the cancel before it closes deliveries.
	l.cancels = l.con.NotifyCancel(make(chan string, 1))
	var err error
	if l.deliveries, err = l.con.Consume(mv.From, "", false, false, false, false, nil); err != nil {
		return l.core.Unstarted(m.channelError(fmt.Sprintf("consuming from %q", mv.From), mv.Vhost, mv.From, err))
	}
	return nil
}

// run feeds the core what happens until it ends the move.
func (l *moveLoop) run(ctx context.Context) (int, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		// select picks at random among ready cases: without this, a
		// delivery ready beside the interrupt could still be published.
		evs := []moveEvent{moveCancelled{Err: ctx.Err()}}
		if ctx.Err() == nil {
			evs = l.next(ctx, tick.C)
		}
		if end, n, err := l.feed(ctx, evs); end {
			return n, err
		}
	}
}

// next waits for what happens next: a delivery when the core takes one,
// the confirms of the head of the window, a closed connection, the context
// done, or a tick.
func (l *moveLoop) next(ctx context.Context, tick <-chan time.Time) []moveEvent {
	var deliveries <-chan amqp.Delivery
	if l.core.Accepting() {
		deliveries = l.deliveries
	}
	var head <-chan struct{}
	if len(l.unfed) > 0 {
		head = l.unfed[0].dc.Done()
	}
	select {
	case <-ctx.Done():
		return []moveEvent{moveCancelled{Err: ctx.Err()}}
	case e := <-l.closed:
		return []moveEvent{l.lost(e)}
	case d, ok := <-deliveries:
		if !ok {
			return []moveEvent{l.deliveriesEnded()}
		}
		l.delivery = d
		return []moveEvent{moveDelivery{Tag: d.DeliveryTag, UserID: d.UserId, MessageID: d.MessageId}}
	case <-head:
		return l.confirms()
	case <-tick:
		return []moveEvent{moveTick{}}
	}
}

// confirms are the events of the publishes at the head of the window whose
// confirm came, in order: for each, the returns buffered by then, then its
// confirm. A return comes before its own confirm, so a publish's return is
// always fed before its confirm.
func (l *moveLoop) confirms() []moveEvent {
	var evs []moveEvent
	for len(l.unfed) > 0 {
		h := l.unfed[0]
		select {
		case <-h.dc.Done():
		default:
			return evs
		}
		for drained := false; !drained; {
			select {
			case ret, ok := <-l.returns:
				if !ok { // the library closes it when the channel shuts down
					return append(evs, l.lost(nil))
				}
				evs = append(evs, moveReturn{MessageID: ret.MessageId, Code: ret.ReplyCode, Text: ret.ReplyText})
			default:
				drained = true
			}
		}
		if !h.dc.Acked() && l.pub.IsClosed() { // the library nacks what its closed channel left
			return append(evs, l.lost(nil))
		}
		l.unfed = l.unfed[1:]
		evs = append(evs, moveConfirm{Tag: h.tag, Ack: h.dc.Acked()})
	}
	return evs
}

// feed gives the core evs and carries out its actions, feeding back the
// outcome of each ack; end says the move ended, having moved n.
func (l *moveLoop) feed(ctx context.Context, evs []moveEvent) (end bool, n int, err error) {
	for len(evs) > 0 {
		acts := l.core.Step(time.Now(), evs...)
		evs = nil
		for _, a := range acts {
			switch a := a.(type) {
			case movePublish:
				if err := l.publish(); err != nil {
					evs = append(evs, l.lost(&amqp.Error{Reason: err.Error()}))
				}
			case moveAck:
				var ev moveEvent = moveAcked{}
				if err := l.con.Ack(a.Tag, true); err != nil {
					ev = l.lost(&amqp.Error{Reason: err.Error()})
				}
				evs = append(evs, ev)
			case moveProgress:
				if l.mv.Progress != nil && ctx.Err() == nil {
					l.mv.Progress(a.Moved, a.Total)
				}
			case moveStop:
				return true, a.Err.Moved, a.Err
			case moveDone:
				return true, a.Moved, l.con.Close()
			}
		}
	}
	return false, 0, nil
}

// publish sends the delivery just fed (the core publishes no other) to
// l.mv.To unchanged, mandatory, awaiting its confirm.
func (l *moveLoop) publish() error {
	d := l.delivery
	dc, err := l.pub.PublishWithDeferredConfirm("", l.mv.To, true, false, amqp.Publishing{
		Headers: d.Headers, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding, DeliveryMode: d.DeliveryMode,
		Priority: d.Priority, CorrelationId: d.CorrelationId, ReplyTo: d.ReplyTo, Expiration: d.Expiration,
		MessageId: d.MessageId, Timestamp: d.Timestamp, Type: d.Type, UserId: d.UserId, AppId: d.AppId, Body: d.Body,
	})
	if err != nil {
		return err
	}
	l.unfed = append(l.unfed, inflight{tag: d.DeliveryTag, dc: dc})
	return nil
}

// deliveriesEnded is the event of the consumer's end: the broker's cancel
// (the queue went down with its node, or was deleted), else the channel or
// connection closed (the library then closes l.cancels too: no cancel).
func (l *moveLoop) deliveriesEnded() moveEvent {
	select {
	case _, cancelled := <-l.cancels:
		if cancelled {
			return moveChannelClosed{Reason: fmt.Sprintf("RabbitMQ cancelled the consumer of %s: the queue's node went down, "+
				"or the queue was deleted (acknowledgements sent just before may not have reached it: the last messages "+
				"counted moved may also still be there, as duplicates)", l.mv.From)}
		}
	default:
	}
	return l.lost(nil)
}

// lost is the event of a closed channel or connection: the connection's own
// reason (e.g. CONNECTION_FORCED, closed from the management UI) says more
// than the failed call's, and follows shortly.
func (l *moveLoop) lost(e *amqp.Error) moveEvent {
	if ce := l.closeReason(250 * time.Millisecond); ce != nil {
		e = ce
	}
	if e == nil {
		return moveChannelClosed{}
	}
	return moveConnectionClosed{Reason: e.Reason}
}

// closeReason is the connection's close reason, waiting for it at most
// wait; nil when the connection stays open (a channel alone closed).
func (l *moveLoop) closeReason(wait time.Duration) *amqp.Error {
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	select {
	case ce := <-l.closed:
		return ce
	case <-timeout.C:
		return nil
	}
}
