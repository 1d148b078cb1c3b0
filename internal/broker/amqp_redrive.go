package broker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Redrive is a move of the messages of From back to To in Vhost.
type Redrive struct {
	Vhost, From, To string
	// Limit caps the messages moved; 0 means all that From holds ready when
	// the move begins.
	Limit int
	// Progress, when set, is told how many were moved out of how many, at
	// least every ProgressEvery messages and every ProgressInterval, and once
	// at the end; never after ctx is done.
	Progress func(moved, total int)
}

// Redrive tuning: the window of publishes awaiting their confirm, and the
// consumer's prefetch (deliveries ready while the window is full).
const (
	RedriveWindow   = 512
	redrivePrefetch = 2 * RedriveWindow
	// ProgressEvery and ProgressInterval space the progress reports.
	ProgressEvery    = 1000
	ProgressInterval = 4 * time.Second
	// redriveStall bounds how long a move waits for a delivery or a confirm.
	redriveStall = 15 * time.Second
)

// Why a move stopped (MoveError.Kind), besides ErrForeignUser and the
// context's errors.
var (
	// ErrReturned: the broker returned a publish as unroutable (To is gone).
	ErrReturned = errors.New("message returned unroutable")
	// ErrNotConfirmed: a publish was nacked, or its channel closed before
	// its confirm came, or no confirm came in time.
	ErrNotConfirmed = errors.New("publish not confirmed")
	// ErrConnectionLost: the AMQP connection or a channel closed.
	ErrConnectionLost = errors.New("AMQP connection lost")
	// ErrForeignUser: a message carries a user_id other than the connecting
	// user's, which RabbitMQ refuses to publish without the impersonator tag.
	ErrForeignUser = errors.New("message published by another user")
)

// MoveError is a move that stopped before it moved all it counted. Every
// message not confirmed is still on From (a duplicate on To is possible, a
// loss is not).
type MoveError struct {
	Redrive      Redrive
	URL          string
	Moved, Total int
	Reason       string
	Kind         error
	Hint         string
}

func (e *MoveError) Error() string {
	r := e.Redrive
	var b strings.Builder
	fmt.Fprintf(&b, "moved %d of %d messages from %s to %s in vhost %q (%s), then stopped: %s. ", e.Moved, e.Total, r.From, r.To,
		r.Vhost, e.URL, strings.TrimSuffix(e.Reason, "."))
	fmt.Fprintf(&b, "The other %d stay on %s: a message leaves it only once its copy on %s is confirmed", e.Total-e.Moved, r.From, r.To)
	if e.Hint != "" {
		b.WriteString(". ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap lets errors.Is see the kind.
func (e *MoveError) Unwrap() error { return e.Kind }

// RedriveDeadLetters moves the messages ready on r.From when it begins (at
// most r.Limit) to r.To over AMQP: each is published to the default exchange
// with routing key r.To, mandatory, with its body, properties and headers
// unchanged, under publisher confirms, and acknowledged on r.From only after
// its confirm and only when no return came. It returns how many it moved;
// any failure stops it with a *MoveError (or an *AMQPError before the
// first), leaving every message not confirmed on r.From. Like PurgeQueue, it
// counts as a write for the shared reads.
func (c *Client) RedriveDeadLetters(ctx context.Context, r Redrive) (int, error) {
	c.wrote() // as PurgeQueue
	defer c.wrote()
	user, impersonator := c.amqpUser(ctx)
	conn, err := c.dialAMQP(ctx, r.Vhost, "terraform-provider-queuey redrive "+r.From)
	if err != nil {
		return 0, err
	}
	defer closeAMQP(conn)
	m, err := c.newMover(conn, r)
	if err != nil || m.total == 0 {
		return 0, err
	}
	m.user, m.impersonator = user, impersonator
	return m.run(ctx)
}

// mover is one redrive in progress.
type mover struct {
	c          *Client
	r          Redrive
	pub, con   *amqp.Channel
	deliveries <-chan amqp.Delivery
	returns    chan amqp.Return
	closed     chan *amqp.Error
	pending    []inflight // published, not settled, in order
	user       string
	// impersonator: the user may publish any user_id.
	impersonator bool

	total, published, moved int
	reported                int
	reportedAt, activeAt    time.Time
}

type inflight struct {
	tag uint64
	dc  *amqp.DeferredConfirmation
}

// newMover counts r.From's ready messages, checks that r.To exists, and
// opens the publishing channel (confirms, returns) and the consuming one.
func (c *Client) newMover(conn *amqp.Connection, r Redrive) (*mover, error) {
	m := &mover{c: c, r: r, closed: conn.NotifyClose(make(chan *amqp.Error, 1))}
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
	m.total = q.Messages
	if r.Limit > 0 && r.Limit < m.total {
		m.total = r.Limit
	}
	if m.total == 0 {
		return m, nil
	}
	if err = m.pub.Confirm(false); err != nil {
		return nil, c.channelError("enabling publisher confirms", r.Vhost, r.To, err)
	}
	// Buffered beyond the window: the library's reader never waits on it.
	m.returns = m.pub.NotifyReturn(make(chan amqp.Return, RedriveWindow+1))
	if err = m.con.Qos(min(m.total, redrivePrefetch), 0, false); err != nil {
		return nil, c.channelError("setting the prefetch", r.Vhost, r.From, err)
	}
	if m.deliveries, err = m.con.Consume(r.From, "", false, false, false, false, nil); err != nil {
		return nil, c.channelError(fmt.Sprintf("consuming from %q", r.From), r.Vhost, r.From, err)
	}
	return m, nil
}

// run moves m.total messages, keeping up to RedriveWindow publishes awaiting
// their confirm.
func (m *mover) run(ctx context.Context) (int, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	m.reportedAt, m.activeAt = time.Now(), time.Now()
	var stop *MoveError // a reason to stop once the window is settled
	for {
		if ctx.Err() != nil {
			// select picks at random among ready cases: without this, a
			// delivery ready beside the interrupt could still be published.
			return m.moved, m.fail(ctx.Err(), "interrupted", "")
		}
		if err := m.settle(ctx); err != nil {
			return m.moved, err
		}
		switch {
		case m.moved == m.total:
			m.report(ctx, true)
			return m.moved, m.con.Close()
		case stop != nil && len(m.pending) == 0:
			stop.Moved = m.moved
			return m.moved, stop
		}
		var deliveries <-chan amqp.Delivery
		if stop == nil && m.published < m.total && len(m.pending) < RedriveWindow {
			deliveries = m.deliveries
		}
		var head <-chan struct{}
		if len(m.pending) > 0 {
			head = m.pending[0].dc.Done()
		}
		select {
		case <-ctx.Done():
			return m.moved, m.fail(ctx.Err(), "interrupted", "")
		case e := <-m.closed:
			return m.moved, m.lost(e)
		case d, ok := <-deliveries:
			if !ok {
				return m.moved, m.lost(nil)
			}
			if stop = m.foreign(d); stop == nil {
				if err := m.publish(d); err != nil {
					return m.moved, err
				}
			}
		case <-head:
		case <-tick.C:
			m.report(ctx, false)
			if time.Since(m.activeAt) > redriveStall {
				return m.moved, m.fail(ErrNotConfirmed, fmt.Sprintf("no delivery from %s and no confirm for %s", m.r.From, redriveStall),
					"Another consumer may be taking the messages of "+m.r.From+", or the broker is blocked (a memory or disk alarm)")
			}
		}
	}
}

// publish sends d to m.r.To unchanged, mandatory, awaiting its confirm.
func (m *mover) publish(d amqp.Delivery) error {
	dc, err := m.pub.PublishWithDeferredConfirm("", m.r.To, true, false, amqp.Publishing{
		Headers: d.Headers, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding, DeliveryMode: d.DeliveryMode,
		Priority: d.Priority, CorrelationId: d.CorrelationId, ReplyTo: d.ReplyTo, Expiration: d.Expiration,
		MessageId: d.MessageId, Timestamp: d.Timestamp, Type: d.Type, UserId: d.UserId, AppId: d.AppId, Body: d.Body,
	})
	if err != nil {
		return m.lost(&amqp.Error{Reason: err.Error()})
	}
	m.pending = append(m.pending, inflight{tag: d.DeliveryTag, dc: dc})
	m.published++
	m.activeAt = time.Now()
	return nil
}

// settle acknowledges on m.r.From, in one multiple ack, the publishes at the
// head of the window whose confirm came positive with no return.
func (m *mover) settle(ctx context.Context) error {
	var last uint64
	n := 0
heads:
	for n < len(m.pending) {
		h := m.pending[n]
		select {
		case <-h.dc.Done():
		default:
			break heads
		}
		if stop := m.unsettled(h); stop != nil {
			// The heads before this one are confirmed with no return:
			// acknowledge them first, so that they are not left behind as
			// duplicates and the count says what moved.
			if err := m.ack(ctx, last, n); err != nil {
				return err
			}
			stop.Moved = m.moved
			return stop
		}
		last = h.tag
		n++
	}
	return m.ack(ctx, last, n)
}

// unsettled is why the confirmed head h cannot be acknowledged on m.r.From: a
// nack, a closed channel, or a return; nil when it can.
func (m *mover) unsettled(h inflight) *MoveError {
	if !h.dc.Acked() {
		if m.pub.IsClosed() {
			return m.lost(nil)
		}
		return m.fail(ErrNotConfirmed, "the broker nacked a publish to "+m.r.To, "Check the broker's log (a full disk, a queue length limit with reject-publish)")
	}
	// A return comes before its confirm, so it is in the buffer by now.
	select {
	case ret, ok := <-m.returns:
		if !ok { // the library closes it when the channel shuts down
			return m.lost(nil)
		}
		return m.fail(ErrReturned, fmt.Sprintf("the broker returned message %s as unroutable (%d %s): queue %q is gone",
			messageID(ret.MessageId), ret.ReplyCode, ret.ReplyText, m.r.To),
			"Declare "+m.r.To+" again (apply the queuey_queue), then invoke again")
	default:
	}
	return nil
}

// ack acknowledges on m.r.From, in one multiple ack up to tag last, the n
// settled publishes at the head of the window.
func (m *mover) ack(ctx context.Context, last uint64, n int) error {
	if n == 0 {
		return nil
	}
	if err := m.con.Ack(last, true); err != nil {
		return m.lost(&amqp.Error{Reason: err.Error()})
	}
	m.pending = m.pending[n:]
	m.moved += n
	m.activeAt = time.Now()
	m.report(ctx, false)
	return nil
}

// foreign is the reason to stop before publishing d when its user_id is not
// the connecting user's and the user cannot impersonate: RabbitMQ would close
// the channel (PRECONDITION_FAILED).
func (m *mover) foreign(d amqp.Delivery) *MoveError {
	if d.UserId == "" || d.UserId == m.user || m.impersonator {
		return nil
	}
	who := "this provider's AMQP user"
	if m.user != "" {
		who = fmt.Sprintf("the connecting user %q", m.user)
	}
	return m.fail(ErrForeignUser, fmt.Sprintf("message %s (the %s on %s) has user_id %q, and RabbitMQ refuses to publish a "+
		"user_id other than %s unless that user has the impersonator tag; it was not published",
		messageID(d.MessageId), ordinal(m.published+1), m.r.From, d.UserId, who),
		"Give the user the impersonator tag (rabbitmqctl set_user_tags USER impersonator, with its other tags), or move "+
			"that message by hand, then invoke again")
}

func (m *mover) lost(e *amqp.Error) *MoveError {
	// The connection's own reason (e.g. CONNECTION_FORCED, closed from the
	// management UI) says more than the failed call's; it follows shortly.
	select {
	case ce := <-m.closed:
		if ce != nil {
			e = ce
		}
	case <-time.After(250 * time.Millisecond):
	}
	reason := "the AMQP channel closed"
	if e != nil {
		reason = "the AMQP connection closed: " + e.Reason
	}
	return m.fail(ErrConnectionLost, reason, "Invoke again once the broker answers: it moves what is left")
}

func (m *mover) fail(kind error, reason, hint string) *MoveError {
	return &MoveError{Redrive: m.r, URL: m.c.amqp.url, Moved: m.moved, Total: m.total, Reason: reason, Kind: kind, Hint: hint}
}

// report calls m.r.Progress when due (or always, with final), never once
// ctx is done.
func (m *mover) report(ctx context.Context, final bool) {
	due := m.moved-m.reported >= ProgressEvery || time.Since(m.reportedAt) >= ProgressInterval
	if m.r.Progress == nil || ctx.Err() != nil || (!final && !due) {
		return
	}
	m.r.Progress(m.moved, m.total)
	m.reported, m.reportedAt = m.moved, time.Now()
}

func messageID(id string) string {
	if id == "" {
		return "(no message id)"
	}
	return fmt.Sprintf("%q", id)
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
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
