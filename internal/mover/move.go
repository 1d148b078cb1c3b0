package mover

import (
	"context"
	"fmt"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// RedriveDeadLetters moves the messages ready on r.From when it begins (at
// most r.Limit) to r.To over AMQP: each is published to the default exchange
// with routing key r.To, mandatory, with its body, properties and headers
// unchanged, under publisher confirms, and acknowledged on r.From only after
// its confirm and only when no return came. It returns how many it moved;
// any failure once it counted r.From stops it with a *MoveError (before,
// an *AMQPError), leaving every message not confirmed on r.From. Like PurgeQueue, it
// counts as a write for the shared reads. The decisions are moveCore's
// (move_core.go); this is the AMQP loop that feeds it.
func (c *Client) RedriveDeadLetters(ctx context.Context, r Redrive) (int, error) {
	c.wrote() // as PurgeQueue
	defer c.wrote()
	user, impersonator := c.amqpUser(ctx)
	conn, err := c.dialAMQP(ctx, r.Vhost, "terraform-provider-queuey redrive "+r.From)
	if err != nil {
		return 0, err
	}
	defer c.closeAMQP(conn)
	m, err := c.newMover(conn.Connection, r, user, impersonator)
	if err != nil || m.core.Total() == 0 {
		return 0, err
	}
	return m.run(ctx)
}

// mover is the AMQP side of one move in progress.
type mover struct {
	r          Redrive
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

// newMover counts r.From's ready messages, checks that r.To exists, and
// opens the publishing channel (confirms, returns) and the consuming one.
func (c *Client) newMover(conn *amqp.Connection, r Redrive, user string, impersonator bool) (*mover, error) {
	m := &mover{r: r, closed: conn.NotifyClose(make(chan *amqp.Error, 1))}
	var err error
	if m.con, err = conn.Channel(); err != nil {
		return nil, c.channelError("opening a channel", r.Vhost, r.From, err)
	}
	q, err := m.con.QueueDeclarePassive(r.From, true, false, false, false, nil)
	if err != nil {
		return nil, c.channelError(fmt.Sprintf("counting the messages of %q", r.From), r.Vhost, r.From, err)
	}
	if m.pub, err = conn.Channel(); err != nil {
		return nil, c.channelError("opening a channel", r.Vhost, r.To, err)
	}
	if _, err = m.pub.QueueDeclarePassive(r.To, true, false, false, false, nil); err != nil {
		return nil, c.channelError(fmt.Sprintf("looking up %q", r.To), r.Vhost, r.To, err)
	}
	m.core = newMoveCore(r, c.amqp.url, q.Messages, user, impersonator, time.Now())
	if m.core.Total() == 0 {
		return m, nil
	}
	if err = m.pub.Confirm(false); err != nil {
		return nil, m.core.Unstarted(c.channelError("enabling publisher confirms", r.Vhost, r.To, err))
	}
	// Buffered beyond the window: the library's reader never waits on it.
	m.returns = m.pub.NotifyReturn(make(chan amqp.Return, RedriveWindow+1))
	if err = m.con.Qos(m.core.Prefetch(), 0, false); err != nil {
		return nil, m.core.Unstarted(c.channelError("setting the prefetch", r.Vhost, r.From, err))
	}
	// Buffered: the library sends the cancel before it closes deliveries.
	m.cancels = m.con.NotifyCancel(make(chan string, 1))
	if m.deliveries, err = m.con.Consume(r.From, "", false, false, false, false, nil); err != nil {
		return nil, m.core.Unstarted(c.channelError(fmt.Sprintf("consuming from %q", r.From), r.Vhost, r.From, err))
	}
	return m, nil
}

// run feeds the core what happens until it ends the move.
func (m *mover) run(ctx context.Context) (int, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		// select picks at random among ready cases: without this, a
		// delivery ready beside the interrupt could still be published.
		evs := []moveEvent{moveCancelled{Err: ctx.Err()}}
		if ctx.Err() == nil {
			evs = m.next(ctx, tick.C)
		}
		if end, n, err := m.feed(ctx, evs); end {
			return n, err
		}
	}
}

// next waits for what happens next: a delivery when the core takes one,
// the confirms of the head of the window, a closed connection, the context
// done, or a tick.
func (m *mover) next(ctx context.Context, tick <-chan time.Time) []moveEvent {
	var deliveries <-chan amqp.Delivery
	if m.core.Accepting() {
		deliveries = m.deliveries
	}
	var head <-chan struct{}
	if len(m.unfed) > 0 {
		head = m.unfed[0].dc.Done()
	}
	select {
	case <-ctx.Done():
		return []moveEvent{moveCancelled{Err: ctx.Err()}}
	case e := <-m.closed:
		return []moveEvent{m.lost(e)}
	case d, ok := <-deliveries:
		if !ok {
			return []moveEvent{m.deliveriesEnded()}
		}
		m.delivery = d
		return []moveEvent{moveDelivery{Tag: d.DeliveryTag, UserID: d.UserId, MessageID: d.MessageId}}
	case <-head:
		return m.confirms()
	case <-tick:
		return []moveEvent{moveTick{}}
	}
}

// confirms are the events of the publishes at the head of the window whose
// confirm came, in order: for each, the returns buffered by then, then its
// confirm. A return comes before its own confirm, so a publish's return is
// always fed before its confirm.
func (m *mover) confirms() []moveEvent {
	var evs []moveEvent
	for len(m.unfed) > 0 {
		h := m.unfed[0]
		select {
		case <-h.dc.Done():
		default:
			return evs
		}
		for drained := false; !drained; {
			select {
			case ret, ok := <-m.returns:
				if !ok { // the library closes it when the channel shuts down
					return append(evs, m.lost(nil))
				}
				evs = append(evs, moveReturn{MessageID: ret.MessageId, Code: ret.ReplyCode, Text: ret.ReplyText})
			default:
				drained = true
			}
		}
		if !h.dc.Acked() && m.pub.IsClosed() { // the library nacks what its closed channel left
			return append(evs, m.lost(nil))
		}
		m.unfed = m.unfed[1:]
		evs = append(evs, moveConfirm{Tag: h.tag, Ack: h.dc.Acked()})
	}
	return evs
}

// feed gives the core evs and carries out its actions, feeding back the
// outcome of each ack; end says the move ended, having moved n.
func (m *mover) feed(ctx context.Context, evs []moveEvent) (end bool, n int, err error) {
	for len(evs) > 0 {
		acts := m.core.Step(time.Now(), evs...)
		evs = nil
		for _, a := range acts {
			switch a := a.(type) {
			case movePublish:
				if err := m.publish(); err != nil {
					evs = append(evs, m.lost(&amqp.Error{Reason: err.Error()}))
				}
			case moveAck:
				var ev moveEvent = moveAcked{}
				if err := m.con.Ack(a.Tag, true); err != nil {
					ev = m.lost(&amqp.Error{Reason: err.Error()})
				}
				evs = append(evs, ev)
			case moveProgress:
				if m.r.Progress != nil && ctx.Err() == nil {
					m.r.Progress(a.Moved, a.Total)
				}
			case moveStop:
				return true, a.Err.Moved, a.Err
			case moveDone:
				return true, a.Moved, m.con.Close()
			}
		}
	}
	return false, 0, nil
}

// publish sends the delivery just fed (the core publishes no other) to
// m.r.To unchanged, mandatory, awaiting its confirm.
func (m *mover) publish() error {
	d := m.delivery
	dc, err := m.pub.PublishWithDeferredConfirm("", m.r.To, true, false, amqp.Publishing{
		Headers: d.Headers, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding, DeliveryMode: d.DeliveryMode,
		Priority: d.Priority, CorrelationId: d.CorrelationId, ReplyTo: d.ReplyTo, Expiration: d.Expiration,
		MessageId: d.MessageId, Timestamp: d.Timestamp, Type: d.Type, UserId: d.UserId, AppId: d.AppId, Body: d.Body,
	})
	if err != nil {
		return err
	}
	m.unfed = append(m.unfed, inflight{tag: d.DeliveryTag, dc: dc})
	return nil
}

// deliveriesEnded is the event of the consumer's end: the broker's cancel
// (the queue went down with its node, or was deleted), else the channel or
// connection closed (the library then closes m.cancels too: no cancel).
func (m *mover) deliveriesEnded() moveEvent {
	select {
	case _, cancelled := <-m.cancels:
		if cancelled {
			return moveChannelClosed{Reason: fmt.Sprintf("RabbitMQ cancelled the consumer of %s: the queue's node went down, "+
				"or the queue was deleted (acknowledgements sent just before may not have reached it: the last messages "+
				"counted moved may also still be there, as duplicates)", m.r.From)}
		}
	default:
	}
	return m.lost(nil)
}

// lost is the event of a closed channel or connection: the connection's own
// reason (e.g. CONNECTION_FORCED, closed from the management UI) says more
// than the failed call's, and follows shortly.
func (m *mover) lost(e *amqp.Error) moveEvent {
	if ce := m.closeReason(250 * time.Millisecond); ce != nil {
		e = ce
	}
	if e == nil {
		return moveChannelClosed{}
	}
	return moveConnectionClosed{Reason: e.Reason}
}

// closeReason is the connection's close reason, waiting for it at most
// wait; nil when the connection stays open (a channel alone closed).
func (m *mover) closeReason(wait time.Duration) *amqp.Error {
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	select {
	case ce := <-m.closed:
		return ce
	case <-timeout.C:
		return nil
	}
}

// amqpUser returns the name of the user the AMQP connection authenticates as
// and whether it has the impersonator tag, from the management API's
// whoami; for basic auth the username when whoami does not answer, else "".
func (c *Client) amqpUser(ctx context.Context) (string, bool) {
	var who struct {
		Name string `json:"name"`
		Tags any    `json:"tags"`
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.getJSON(wctx, "reading the current user", "whoami", &who); err != nil || who.Name == "" {
		if c.amqp.method == authBasic {
			return c.amqp.user, false
		}
		return "", false
	}
	var tags []string
	switch t := who.Tags.(type) {
	case string:
		tags = strings.Split(t, ",")
	case []any:
		for _, v := range t {
			tags = append(tags, fmt.Sprint(v))
		}
	}
	for _, t := range tags {
		if strings.TrimSpace(t) == "impersonator" {
			return who.Name, true
		}
	}
	return who.Name, false
}
