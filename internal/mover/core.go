package mover

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Move is a move of the messages of From to To in Vhost.
type Move struct {
	Vhost, From, To string
	// Limit caps the messages moved; 0 means all that From holds ready when
	// the move begins.
	Limit int
	// Progress, when set, is told how many were moved out of how many, at
	// least every progressEvery messages and every progressInterval, and once
	// at the end; never after ctx is done.
	Progress func(moved, total int)
}

// Move tuning: the window of publishes awaiting their confirm, and the
// consumer's prefetch (deliveries ready while the window is full).
const (
	Window   = 512
	prefetch = 2 * Window
	// progressEvery and progressInterval space the progress reports.
	progressEvery    = 1000
	progressInterval = 4 * time.Second
	// stallBound bounds how long a move waits for a delivery or a confirm.
	stallBound = 15 * time.Second
)

// moveCore holds the decisions of one message move (Mover.Move)
// apart from AMQP: it is told what happened (moveEvent) with the time it
// happened, and answers what to do (moveAction). It never blocks and never
// reads a clock; the loop in move.go feeds it and carries out its
// actions. Its guarantee: a message is acknowledged on From only after the
// positive confirm of its copy on To, with no return before that confirm.
type moveCore struct {
	mv           Move
	url          string
	user         string
	impersonator bool // the user may publish any user_id
	total        int
	window       int           // publishes awaiting their confirm, at most
	stall        time.Duration // without a delivery, a confirm or an ack, at most

	pending    []moveInflight // published, not acknowledged, in delivery order
	published  int
	moved      int
	acking     int         // publishes at the head the last moveAck covers, until moveAcked
	returned   *moveReturn // the first return: later confirms cannot be trusted
	chanClosed bool        // a channel closed: ack what is confirmed, then stop
	closedWhy  string      // why, as moveChannelClosed said
	foreign    *MoveError  // a delivery not published: stop once the window is settled
	reported   int         // moved at the last progress report
	reportedAt time.Time   // the last progress report (or the start)
	activeAt   time.Time   // the last delivery, confirm or ack (or the start)
	over       bool        // stopped or done: later events change nothing
}

// moveInflight is one publish awaiting its acknowledgement on From.
type moveInflight struct {
	tag   uint64
	state confirmState
}

type confirmState int

const (
	unconfirmed   confirmState = iota
	confirmedOK                // a positive confirm before any return
	nacked                     // a negative confirm
	confirmedLate              // a positive confirm after a return: the return may be this publish's
)

// newMoveCore starts the move mv at now: counted is what mv.From held ready
// at the start, capped by mv.Limit; user is the connecting user.
func newMoveCore(mv Move, url string, counted int, user string, impersonator bool, now time.Time) *moveCore {
	total := counted
	if mv.Limit > 0 {
		total = min(total, mv.Limit)
	}
	return &moveCore{mv: mv, url: url, user: user, impersonator: impersonator, total: total,
		window: Window, stall: stallBound, reportedAt: now, activeAt: now}
}

// Total is how many messages the move moves.
func (c *moveCore) Total() int { return c.total }

// Prefetch is the consumer's prefetch: deliveries ready while the window is
// full, no more than the move takes.
func (c *moveCore) Prefetch() int { return min(c.total, prefetch) }

// Accepting says whether the move takes a delivery now: not after a stop is
// decided, nor once it has published its total, nor while the window is full.
func (c *moveCore) Accepting() bool {
	return !c.over && c.foreign == nil && c.returned == nil && !c.chanClosed && c.published < c.total &&
		len(c.pending) < c.window
}

// The events of a move.
type (
	moveEvent interface{ isMoveEvent() }
	// moveDelivery is a message delivered from From.
	moveDelivery struct {
		Tag               uint64 // delivery tags increase on a channel
		UserID, MessageID string
	}
	// moveConfirm is the broker's confirm of the publish of delivery Tag; a
	// nack when Ack is false. The loop feeds a publish's return, if any,
	// before its confirm (the broker sends them in that order).
	moveConfirm struct {
		Tag uint64
		Ack bool
	}
	// moveReturn is a publish the broker returned as unroutable.
	moveReturn struct {
		MessageID string
		Code      uint16
		Text      string
	}
	// moveAcked says the last moveAck was sent.
	moveAcked struct{}
	// moveChannelClosed: a channel of the move closed (in place of the
	// confirms it will not give), or the last moveAck failed, or the broker
	// cancelled the consumer; Reason says why when the loop knows.
	moveChannelClosed struct{ Reason string }
	// moveConnectionClosed: the connection closed, for Reason.
	moveConnectionClosed struct{ Reason string }
	// moveCancelled: the caller's context is done, with Err.
	moveCancelled struct{ Err error }
	// moveTick: time passed (the Step's now).
	moveTick struct{}
)

func (moveDelivery) isMoveEvent()         {}
func (moveConfirm) isMoveEvent()          {}
func (moveReturn) isMoveEvent()           {}
func (moveAcked) isMoveEvent()            {}
func (moveChannelClosed) isMoveEvent()    {}
func (moveConnectionClosed) isMoveEvent() {}
func (moveCancelled) isMoveEvent()        {}
func (moveTick) isMoveEvent()             {}

// The actions of a move, carried out in the order given.
type (
	moveAction interface{ isMoveAction() }
	// movePublish: publish delivery Tag, the one just fed, to To.
	movePublish struct{ Tag uint64 }
	// moveAck: acknowledge on From every delivery up to Tag (multiple), then
	// feed moveAcked, or the closed channel or connection if it fails.
	moveAck struct{ Tag uint64 }
	// moveProgress: tell the caller how many moved of how many.
	moveProgress struct{ Moved, Total int }
	// moveStop: the move ends with Err.
	moveStop struct{ Err *MoveError }
	// moveDone: the move ends, all Moved.
	moveDone struct{ Moved int }
)

func (movePublish) isMoveAction()  {}
func (moveAck) isMoveAction()      {}
func (moveProgress) isMoveAction() {}
func (moveStop) isMoveAction()     {}
func (moveDone) isMoveAction()     {}

// Step takes evs, which happened in that order by now, and returns what to
// do. A closed connection, the context done or the stall bound passed stops
// the move at once (the events after it are not looked at); a closed channel
// stops it once what was confirmed is acknowledged, the other channel being
// open.
func (c *moveCore) Step(now time.Time, evs ...moveEvent) []moveAction {
	var acts []moveAction
	for _, ev := range evs {
		if c.over {
			return acts
		}
		switch ev := ev.(type) {
		case moveDelivery:
			acts = append(acts, c.deliver(now, ev)...)
		case moveConfirm:
			c.confirm(now, ev)
		case moveReturn:
			if c.returned == nil {
				c.returned = &ev
			}
		case moveAcked:
			acts = append(acts, c.acked(now)...)
		case moveChannelClosed:
			if c.acking > 0 || c.chanClosed { // the ack failed: nothing more can be acknowledged
				return append(acts, c.stop(c.lost(c.closedReason(ev.Reason))))
			}
			c.chanClosed, c.closedWhy = true, ev.Reason
		case moveConnectionClosed:
			return append(acts, c.stop(c.lost("the AMQP connection closed: "+ev.Reason)))
		case moveCancelled:
			return append(acts, c.stop(c.fail(ev.Err, noCause, "interrupted")))
		case moveTick:
			acts = append(acts, c.tick(now)...)
		}
	}
	if c.over {
		return acts
	}
	return append(acts, c.settle()...)
}

// deliver publishes d, or, when its user_id is foreign, decides to stop
// once the publishes before it are settled.
func (c *moveCore) deliver(now time.Time, d moveDelivery) []moveAction {
	if !c.Accepting() {
		return nil // not asked for: it stays on From
	}
	if c.foreign = c.foreignUser(d); c.foreign != nil {
		return nil
	}
	c.pending = append(c.pending, moveInflight{tag: d.Tag})
	c.published++
	c.activeAt = now
	return []moveAction{movePublish{Tag: d.Tag}}
}

// confirm records the confirm of a publish awaiting it.
func (c *moveCore) confirm(now time.Time, ev moveConfirm) {
	i := sort.Search(len(c.pending), func(i int) bool { return c.pending[i].tag >= ev.Tag })
	if i == len(c.pending) || c.pending[i].tag != ev.Tag || c.pending[i].state != unconfirmed {
		return
	}
	c.activeAt = now
	state := confirmedOK
	if !ev.Ack {
		state = nacked
	} else if c.returned != nil {
		state = confirmedLate
	}
	c.pending[i].state = state
}

// settle acknowledges the run of publishes at the head confirmed with no
// return, or stops at a head that cannot be acknowledged, or, when nothing
// is pending, at the stop decided before.
func (c *moveCore) settle() []moveAction {
	if c.acking > 0 {
		return nil
	}
	n := 0
	for n < len(c.pending) && c.pending[n].state == confirmedOK {
		n++
	}
	if n > 0 {
		c.acking = n
		return []moveAction{moveAck{Tag: c.pending[n-1].tag}}
	}
	var head confirmState
	if len(c.pending) > 0 {
		head = c.pending[0].state
	}
	if head == nacked {
		return []moveAction{c.stop(c.fail(errNotConfirmed, Nacked, "the broker nacked a publish to "+c.mv.To))}
	}
	if head == confirmedLate || len(c.pending) == 0 && c.returned != nil {
		return []moveAction{c.stop(c.returnedError())}
	}
	if c.chanClosed {
		return []moveAction{c.stop(c.lost(c.closedReason(c.closedWhy)))}
	}
	if len(c.pending) == 0 && c.foreign != nil {
		c.foreign.Moved = c.moved
		return []moveAction{c.stop(c.foreign)}
	}
	return nil
}

// acked counts the publishes the last moveAck covered as moved.
func (c *moveCore) acked(now time.Time) []moveAction {
	if c.acking == 0 {
		return nil
	}
	c.pending = c.pending[c.acking:]
	c.moved += c.acking
	c.acking = 0
	c.activeAt = now
	if c.moved == c.total {
		c.over = true
		return []moveAction{c.report(now), moveDone{Moved: c.moved}}
	}
	if c.moved-c.reported >= progressEvery || now.Sub(c.reportedAt) >= progressInterval {
		return []moveAction{c.report(now)}
	}
	return nil
}

// tick stops a move that has seen no delivery, confirm or ack for longer
// than the stall bound, and reports progress when it is due.
func (c *moveCore) tick(now time.Time) []moveAction {
	if now.Sub(c.activeAt) > c.stall {
		return []moveAction{c.stop(c.stalled())}
	}
	if now.Sub(c.reportedAt) >= progressInterval {
		return []moveAction{c.report(now)}
	}
	return nil
}

// stalled is the error of a move past the stall bound: waiting for the
// confirms of its publishes, the broker or the network to it stopped
// answering (a connection that stops answering without closing is given
// up here, before the heartbeat's deadline); waiting for a delivery, the
// messages may also have gone to another consumer.
func (c *moveCore) stalled() *MoveError {
	waiting := 0
	for _, p := range c.pending {
		if p.state == unconfirmed {
			waiting++
		}
	}
	if waiting > 0 {
		return c.fail(errNotConfirmed, ConfirmsStalled, fmt.Sprintf("no confirm for %s of the messages published to %s (%d awaiting one)",
			c.stall, c.mv.To, waiting))
	}
	return c.fail(errNotConfirmed, DeliveriesStalled, fmt.Sprintf("no delivery from %s and no confirm for %s", c.mv.From, c.stall))
}

func (c *moveCore) report(now time.Time) moveAction {
	c.reported, c.reportedAt = c.moved, now
	return moveProgress{Moved: c.moved, Total: c.total}
}

func (c *moveCore) stop(err *MoveError) moveAction {
	c.over = true
	return moveStop{Err: err}
}

// foreignUser is the reason not to publish d when its user_id is not the
// connecting user's and the user cannot impersonate: RabbitMQ would close
// the channel (PRECONDITION_FAILED).
func (c *moveCore) foreignUser(d moveDelivery) *MoveError {
	if d.UserID == "" || d.UserID == c.user || c.impersonator {
		return nil
	}
	who := "this provider's AMQP user"
	if c.user != "" {
		who = fmt.Sprintf("the connecting user %q", c.user)
	}
	return c.fail(errForeignUser, ForeignUserID, fmt.Sprintf("message %s (the %s on %s) has user_id %q, and RabbitMQ refuses to publish a "+
		"user_id other than %s unless that user has the impersonator tag; it was not published",
		messageID(d.MessageID), ordinal(c.published+1), c.mv.From, d.UserID, who))
}

func (c *moveCore) returnedError() *MoveError {
	ret := c.returned
	return c.fail(errReturned, DestinationGone, fmt.Sprintf("the broker returned message %s as unroutable (%d %s): queue %q is gone",
		messageID(ret.MessageID), ret.Code, ret.Text, c.mv.To))
}

// Unstarted is the error of a move that counted its messages but failed
// before its first delivery (enabling the confirms, the prefetch or the
// consumer), err an *Error: none moved, all stay on From. Its kind and
// cause are err's, else errConnectionLost.
func (c *moveCore) Unstarted(err error) *MoveError {
	var ae *Error
	if !errors.As(err, &ae) {
		ae = &Error{Reason: err.Error()}
	}
	reason := strings.TrimSuffix(ae.Reason, ".")
	if ae.Op != "" {
		reason = ae.Op + " failed: " + reason
	}
	e := c.lost(reason)
	if ae.Kind != nil {
		e.Kind, e.Cause = ae.Kind, ae.Cause
	}
	c.over = true
	return e
}

// closedReason is the stop's reason for a closed channel: why, else the
// reason the first close gave, else that the channel closed.
func (c *moveCore) closedReason(why string) string {
	if c.closedWhy != "" {
		why = c.closedWhy
	}
	if why == "" {
		return "the AMQP channel closed"
	}
	return why
}

func (c *moveCore) lost(reason string) *MoveError {
	return c.fail(errConnectionLost, ConnectionLost, reason)
}

func (c *moveCore) fail(kind error, cause Cause, reason string) *MoveError {
	return &MoveError{Vhost: c.mv.Vhost, From: c.mv.From, To: c.mv.To, URL: c.url, Moved: c.moved, Total: c.total, Reason: reason, Kind: kind, Cause: cause}
}

func messageID(id string) string {
	if id == "" {
		return "(no message id)"
	}
	return fmt.Sprintf("%q", id)
}

// ordinal writes n as 1st, 2nd, 3rd, 4th, ... 11th, 12th, 13th, ... 21st.
func ordinal(n int) string {
	suffix := "th"
	if tens := n % 100; tens < 11 || tens > 13 {
		suffix = [...]string{"th", "st", "nd", "rd", "th", "th", "th", "th", "th", "th"}[n%10]
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
