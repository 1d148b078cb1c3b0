package mover

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

var moveStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Events, short.
func dlv(tag uint64) moveDelivery { return moveDelivery{Tag: tag, MessageID: fmt.Sprintf("m-%d", tag)} }
func ok(tag uint64) moveEvent     { return moveConfirm{Tag: tag, Ack: true} }
func nack(tag uint64) moveConfirm { return moveConfirm{Tag: tag} }

// dlvFrom is dlv(tag) with the user_id user.
func dlvFrom(tag uint64, user string) moveDelivery { d := dlv(tag); d.UserID = user; return d }

var ret = moveReturn{MessageID: "m-2", Code: 312, Text: "NO_ROUTE"}

// moveStep is what is fed at moveStart+at, and what must come out: the
// actions as actionText writes them, whether the core then takes a delivery
// (open: 1 yes, -1 no, 0 not checked), and a piece of the stop's reason.
type moveStep struct {
	at     time.Duration
	evs    []moveEvent
	want   []string
	open   int
	reason string
}

type moveCase struct {
	name           string
	counted, limit int
	window         int    // 0: Window
	user           string // the connecting user, "" when not known (only a delivery's user_id tells)
	impersonator   bool
	steps          []moveStep
}

// actionText writes a: "publish 3", "ack 3", "progress 2/5", "done 5",
// "stop publish not confirmed 2/5".
func actionText(a moveAction) string {
	switch a := a.(type) {
	case movePublish:
		return fmt.Sprintf("publish %d", a.Tag)
	case moveAck:
		return fmt.Sprintf("ack %d", a.Tag)
	case moveProgress:
		return fmt.Sprintf("progress %d/%d", a.Moved, a.Total)
	case moveDone:
		return fmt.Sprintf("done %d", a.Moved)
	case moveStop:
		return fmt.Sprintf("stop %v %d/%d", a.Err.Kind, a.Err.Moved, a.Err.Total)
	}
	return fmt.Sprintf("%#v", a)
}

func evs(e ...moveEvent) []moveEvent { return e }
func want(a ...string) []string      { return a }

var acked = moveAcked{}

// Acks: a message is acked on From once its confirm and those of all before it came.
var acknowledgeCases = []moveCase{
	{name: "all confirmed: one multiple ack, then done", counted: 3, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2), dlv(3)), want: want("publish 1", "publish 2", "publish 3"), open: -1},
		{evs: evs(ok(1), ok(2), ok(3)), want: want("ack 3")},
		{evs: evs(acked), want: want("progress 3/3", "done 3")},
		{evs: evs(dlv(4), moveTick{}), want: want()},
	}},
	{name: "a confirm behind an unconfirmed head waits for it", counted: 3, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2), dlv(3)), want: want("publish 1", "publish 2", "publish 3")},
		{evs: evs(ok(2)), want: want()},
		{evs: evs(ok(1)), want: want("ack 2")},
		{evs: evs(ok(3)), want: want()}, // one ack at a time
		{evs: evs(acked), want: want("ack 3")},
		{evs: evs(acked), want: want("progress 3/3", "done 3")},
	}},
	{name: "an unknown or repeated confirm changes nothing", counted: 2, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2)), want: want("publish 1", "publish 2")},
		{evs: evs(ok(9), ok(0)), want: want()},
		{evs: evs(ok(1)), want: want("ack 1")},
		{evs: evs(acked, acked, nack(1)), want: want()},
		{evs: evs(ok(2)), want: want("ack 2")},
		{evs: evs(acked), want: want("progress 2/2", "done 2")},
	}},
	{name: "a nack in the middle: the heads before it are acked, then it stops", counted: 4, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2), dlv(3), dlv(4)), want: want("publish 1", "publish 2", "publish 3", "publish 4")},
		{evs: evs(ok(1), ok(2), nack(3), ok(4)), want: want("ack 2")},
		{evs: evs(acked), want: want("stop publish not confirmed 2/4"), reason: "the broker nacked a publish to q"},
	}},
	{name: "a nack at the head stops at once", counted: 2, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2)), want: want("publish 1", "publish 2")},
		{evs: evs(nack(1)), want: want("stop publish not confirmed 0/2")},
	}},
}

// Returns: a publish returned is never acked, nor one confirmed after the return.
var returnCases = []moveCase{
	{name: "a return before its confirm: that publish stays on From", counted: 3, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2), dlv(3)), want: want("publish 1", "publish 2", "publish 3")},
		{evs: evs(ok(1)), want: want("ack 1")},
		{evs: evs(acked, ret), want: want(), open: -1},
		{evs: evs(dlv(4)), want: want()},
		{evs: evs(ok(2)), want: want("stop message returned unroutable 1/3"), reason: `message "m-2" as unroutable (312 NO_ROUTE): queue "q" is gone`},
	}},
	{name: "the heads confirmed before a return are acked", counted: 3, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2), dlv(3)), want: want("publish 1", "publish 2", "publish 3")},
		{evs: evs(ok(1), ok(2), ret, ok(3)), want: want("ack 2")},
		{evs: evs(acked), want: want("stop message returned unroutable 2/3")},
	}},
	{name: "a head confirmed after a return is not acked even with later ones confirmed before it", counted: 2,
		steps: []moveStep{
			{evs: evs(dlv(1), dlv(2)), want: want("publish 1", "publish 2")},
			{evs: evs(ok(2), ret, ok(1)), want: want("stop message returned unroutable 0/2")},
		}},
	{name: "a nack after a return says nacked", counted: 2, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2)), want: want("publish 1", "publish 2")},
		{evs: evs(ret, nack(1)), want: want("stop publish not confirmed 0/2")},
	}},
	{name: "a return with nothing awaiting a confirm stops", counted: 2, steps: []moveStep{
		{evs: evs(dlv(1), ok(1)), want: want("publish 1", "ack 1")},
		{evs: evs(acked, ret), want: want("stop message returned unroutable 1/2")},
	}},
}

// Counts: the move takes what From held at the start, capped by Limit, a window at a time.
var countCases = []moveCase{
	{name: "the count at the start is reached: no more deliveries", counted: 2, steps: []moveStep{
		{evs: evs(dlv(1)), want: want("publish 1"), open: 1},
		{evs: evs(dlv(2)), want: want("publish 2"), open: -1},
		{evs: evs(dlv(3)), want: want()},
		{evs: evs(ok(1), ok(2)), want: want("ack 2")},
		{evs: evs(acked), want: want("progress 2/2", "done 2")},
	}},
	{name: "limit below the count", counted: 10, limit: 2, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2), dlv(3)), want: want("publish 1", "publish 2"), open: -1},
		{evs: evs(ok(1), ok(2)), want: want("ack 2")},
		{evs: evs(acked), want: want("progress 2/2", "done 2")},
	}},
	{name: "limit above the count", counted: 2, limit: 3, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2), dlv(3)), want: want("publish 1", "publish 2"), open: -1},
	}},
	{name: "limit equal to the count", counted: 2, limit: 2, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2)), want: want("publish 1", "publish 2"), open: -1},
	}},
	{name: "the window full: no delivery until the head is acked", counted: 5, window: 2, steps: []moveStep{
		{evs: evs(dlv(1)), want: want("publish 1"), open: 1},
		{evs: evs(dlv(2)), want: want("publish 2"), open: -1},
		{evs: evs(dlv(3)), want: want()},
		{evs: evs(ok(1)), want: want("ack 1"), open: -1}, // confirmed, not yet acked: still in the window
		{evs: evs(acked), want: want(), open: 1},
		{evs: evs(dlv(3)), want: want("publish 3"), open: -1},
	}},
}

// The prefetch: the deliveries ready while the window is full, no more than the move takes.
func TestMoveCore_prefetch(t *testing.T) {
	t.Parallel()
	for counted, want := range map[int]int{0: 0, 1: 1, prefetch: prefetch, prefetch + 1: prefetch} {
		if got := newMoveCore(Move{}, "", counted, "", false, moveStart).Prefetch(); got != want {
			t.Errorf("Prefetch() of a move of %d = %d, want %d", counted, got, want)
		}
	}
	if c := newMoveCore(Move{}, "", 0, "", false, moveStart); c.Total() != 0 || c.Accepting() {
		t.Errorf("a move of nothing: Total() %d, Accepting() %v", c.Total(), c.Accepting())
	}
}

// A delivery with another user's user_id, which RabbitMQ would refuse to publish.
var foreignUserCases = []moveCase{
	{name: "stops once the publishes before it are acked, not publishing it", counted: 3, user: "me", steps: []moveStep{
		{evs: evs(dlvFrom(1, "me"), dlv(2)), want: want("publish 1", "publish 2")},
		{evs: evs(dlvFrom(3, "other")), want: want(), open: -1},
		{evs: evs(ok(1)), want: want("ack 1")},
		{evs: evs(acked), want: want()},
		{evs: evs(ok(2)), want: want("ack 2")},
		{evs: evs(acked), want: want("stop message published by another user 2/3"),
			reason: `message "m-3" (the 3rd on q.dead) has user_id "other", and RabbitMQ refuses to publish a user_id other than the connecting user "me"`},
	}},
	{name: "stops at once with nothing awaiting a confirm", counted: 3, user: "me", steps: []moveStep{
		{evs: evs(dlvFrom(1, "other")), want: want("stop message published by another user 0/3"), reason: "(the 1st on q.dead)"},
	}},
	{name: "a return before the window settles says returned", counted: 3, user: "me", steps: []moveStep{
		{evs: evs(dlv(1), dlvFrom(2, "other")), want: want("publish 1")},
		{evs: evs(ret, ok(1)), want: want("stop message returned unroutable 0/3")},
	}},
	{name: "with the impersonator tag any user_id is published", counted: 2, user: "me", impersonator: true, steps: []moveStep{
		{evs: evs(dlvFrom(1, "other"), dlvFrom(2, "me")), want: want("publish 1", "publish 2")},
	}},
	{name: "an unknown connecting user: any user_id is foreign", counted: 2, steps: []moveStep{
		{evs: evs(dlvFrom(1, "me")), want: want("stop message published by another user 0/2"), reason: "other than this provider's AMQP user"},
	}},
}

// A connection or channel closed, or the context done.
var closedCases = []moveCase{
	{name: "a closed connection stops at once, acking nothing more", counted: 3, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2), dlv(3)), want: want("publish 1", "publish 2", "publish 3")},
		{evs: evs(ok(1), moveConnectionClosed{Reason: "CONNECTION_FORCED - closed via management plugin"}, ok(2)),
			want: want("stop AMQP connection lost 0/3"), reason: "the AMQP connection closed: CONNECTION_FORCED"},
		{evs: evs(acked, ok(3)), want: want()},
	}},
	{name: "a closed channel: what was confirmed is acked, then it stops", counted: 3, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2), dlv(3)), want: want("publish 1", "publish 2", "publish 3")},
		{evs: evs(ok(1), moveChannelClosed{}), want: want("ack 1"), open: -1},
		{evs: evs(acked), want: want("stop AMQP connection lost 1/3"), reason: "the AMQP channel closed"},
	}},
	{name: "a cancelled consumer: the reason is the loop's", counted: 3, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2), ok(1), moveChannelClosed{Reason: "RabbitMQ cancelled the consumer"}), want: want("publish 1", "publish 2", "ack 1")},
		{evs: evs(acked), want: want("stop AMQP connection lost 1/3"), reason: "RabbitMQ cancelled the consumer"},
	}},
	{name: "a cancelled consumer whose ack fails keeps the first reason", counted: 3, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2), ok(1), moveChannelClosed{Reason: "RabbitMQ cancelled the consumer"}), want: want("publish 1", "publish 2", "ack 1")},
		{evs: evs(moveChannelClosed{}), want: want("stop AMQP connection lost 0/3"), reason: "RabbitMQ cancelled the consumer"},
	}},
	{name: "a closed channel with nothing confirmed stops at once", counted: 3, steps: []moveStep{
		{evs: evs(dlv(1)), want: want("publish 1")},
		{evs: evs(moveChannelClosed{}), want: want("stop AMQP connection lost 0/3")},
	}},
	{name: "a closed channel after all is confirmed ends done", counted: 1, steps: []moveStep{
		{evs: evs(dlv(1), ok(1), moveChannelClosed{}), want: want("publish 1", "ack 1")},
		{evs: evs(acked), want: want("progress 1/1", "done 1")},
	}},
	{name: "an ack that fails is not counted", counted: 3, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2), ok(1)), want: want("publish 1", "publish 2", "ack 1")},
		{evs: evs(moveChannelClosed{}), want: want("stop AMQP connection lost 0/3")},
	}},
	{name: "a second closed channel stops at once", counted: 3, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2)), want: want("publish 1", "publish 2")},
		{evs: evs(ok(1), moveChannelClosed{}), want: want("ack 1")},
		{evs: evs(moveChannelClosed{}), want: want("stop AMQP connection lost 0/3")},
	}},
	{name: "the context done stops at once", counted: 3, steps: []moveStep{
		{evs: evs(dlv(1), ok(1)), want: want("publish 1", "ack 1")},
		{evs: evs(acked, dlv(2), ok(2), moveCancelled{Err: context.Canceled}, acked), want: want("publish 2",
			"stop context canceled 1/3"), reason: "interrupted"},
	}},
}

// stalled is the stop of a move of 3 past the stall bound with none moved.
const stalled = "stop publish not confirmed 0/3"

// The stall bound, measured from the last delivery, confirm or ack: at
// exactly stallBound the move goes on, a nanosecond later it stops.
var stallCases = []moveCase{
	{name: "from the start", counted: 3, steps: []moveStep{
		{at: stallBound, evs: evs(moveTick{}), want: want("progress 0/3")},
		{at: stallBound + 1, evs: evs(moveTick{}), want: want(stalled), reason: "no delivery from q.dead and no confirm for 15s"},
	}},
	{name: "from a delivery", counted: 3, steps: []moveStep{
		{at: 10 * time.Second, evs: evs(dlv(1)), want: want("publish 1")},
		{at: 10*time.Second + stallBound, evs: evs(moveTick{}), want: want("progress 0/3")},
		{at: 10*time.Second + stallBound + 1, evs: evs(moveTick{}), want: want(stalled),
			reason: "no confirm for 15s of the messages published to q (1 awaiting one)"},
	}},
	{name: "from a confirm that acks nothing", counted: 3, steps: []moveStep{
		{evs: evs(dlv(1), dlv(2)), want: want("publish 1", "publish 2")},
		{at: 10 * time.Second, evs: evs(ok(2)), want: want()},
		{at: 10*time.Second + stallBound, evs: evs(moveTick{}), want: want("progress 0/3")},
		{at: 10*time.Second + stallBound + 1, evs: evs(moveTick{}), want: want(stalled)},
	}},
	{name: "from an ack", counted: 3, steps: []moveStep{
		{evs: evs(dlv(1), ok(1)), want: want("publish 1", "ack 1")},
		{at: 10 * time.Second, evs: evs(acked), want: want("progress 1/3")},
		{at: 10*time.Second + stallBound, evs: evs(moveTick{}), want: want("progress 1/3")},
		{at: 10*time.Second + stallBound + 1, evs: evs(moveTick{}), want: want("stop publish not confirmed 1/3"),
			reason: "no delivery from q.dead and no confirm for 15s"},
	}},
	{name: "a foreign delivery is no activity", counted: 3, user: "me", steps: []moveStep{
		{at: 10 * time.Second, evs: evs(dlv(1), dlvFrom(2, "other")), want: want("publish 1")},
		{at: 10*time.Second + stallBound + 1, evs: evs(moveTick{}), want: want(stalled)},
	}},
}

// The core's cases, group by group: each step is fed at moveStart+at and its actions (as
// actionText writes them), whether the core then takes a delivery, and its stop's reason checked.
// Progress is told every progressEvery messages acked or progressInterval since the last report,
// whichever comes first, and at the end (its cases built here: a thousand events a step).
func TestMoveCore(t *testing.T) {
	t.Parallel()
	// The events ev makes of the tags from to to, and the publishes of their deliveries.
	many := func(from, to uint64, ev func(uint64) moveEvent) (out []moveEvent) {
		for tag := from; tag <= to; tag++ {
			out = append(out, ev(tag))
		}
		return out
	}
	published := func(from, to uint64) (out []string) {
		for tag := from; tag <= to; tag++ {
			out = append(out, fmt.Sprintf("publish %d", tag))
		}
		return out
	}
	d := func(tag uint64) moveEvent { return dlv(tag) }
	const every = progressEvery
	progressCases := []moveCase{
		{name: "every progressEvery acked", counted: 3 * every, window: 3 * every, steps: []moveStep{
			{evs: many(1, every, d), want: published(1, every)},
			{evs: many(1, every-1, ok), want: want(fmt.Sprintf("ack %d", every-1))},
			{evs: evs(acked), want: want()},
			{evs: evs(ok(every)), want: want(fmt.Sprintf("ack %d", every))},
			{evs: evs(acked), want: want(fmt.Sprintf("progress %d/%d", every, 3*every))},
			// counted from the last report
			{evs: many(every+1, 2*every, d), want: published(every+1, 2*every)},
			{evs: many(every+1, 2*every-1, ok), want: want(fmt.Sprintf("ack %d", 2*every-1))},
			{evs: evs(acked), want: want()},
			{evs: evs(ok(2 * every)), want: want(fmt.Sprintf("ack %d", 2*every))},
			{evs: evs(acked), want: want(fmt.Sprintf("progress %d/%d", 2*every, 3*every))},
		}},
		{name: "every progressInterval, on a tick or an ack", counted: 3, steps: []moveStep{
			{at: progressInterval - 1, evs: evs(moveTick{}), want: want()},
			{at: progressInterval, evs: evs(moveTick{}), want: want("progress 0/3")},
			{at: progressInterval + 1, evs: evs(dlv(1), ok(1)), want: want("publish 1", "ack 1")},
			{at: 2*progressInterval - 1, evs: evs(acked), want: want()},
			{at: 2 * progressInterval, evs: evs(dlv(2), ok(2)), want: want("publish 2", "ack 2")},
			{at: 2 * progressInterval, evs: evs(acked), want: want("progress 2/3")},
			{at: 3*progressInterval - 1, evs: evs(moveTick{}), want: want()},
		}},
	}
	for group, cases := range map[string][]moveCase{"acknowledges": acknowledgeCases, "returns": returnCases,
		"counts": countCases, "foreign user_id": foreignUserCases, "closed": closedCases, "stall": stallCases,
		"progress": progressCases} {
		for _, tc := range cases {
			t.Run(group+": "+tc.name, func(t *testing.T) {
				t.Parallel()
				c := newMoveCore(Move{Vhost: "v", From: "q.dead", To: "q", Limit: tc.limit}, "amqp://h:5672", tc.counted, tc.user,
					tc.impersonator, moveStart)
				c.window = cmp.Or(tc.window, Window)
				for i, s := range tc.steps {
					var got []string
					var stop *MoveError
					for _, a := range c.Step(moveStart.Add(s.at), s.evs...) {
						got = append(got, actionText(a))
						if st, isStop := a.(moveStop); isStop {
							stop = st.Err
						}
					}
					if !slices.Equal(got, s.want) { // nil and empty alike
						t.Fatalf("step %d (%v at +%v): got %q, want %q", i, s.evs, s.at, got, s.want)
					}
					if s.open != 0 && c.Accepting() != (s.open > 0) {
						t.Fatalf("step %d: Accepting() = %v, want %v", i, c.Accepting(), s.open > 0)
					}
					if s.reason != "" && (stop == nil || !strings.Contains(stop.Reason, s.reason)) {
						t.Fatalf("step %d: stop %v, want a reason with %q", i, stop, s.reason)
					}
				}
			})
		}
	}
}

func TestOrdinal(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th",
		21: "21st", 22: "22nd", 23: "23rd", 101: "101st", 111: "111th", 112: "112th", 113: "113th", 10: "10th"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, got, want)
		}
	}
	if messageID("") != "(no message id)" || messageID("a") != `"a"` {
		t.Errorf("messageID: %q, %q", messageID(""), messageID("a"))
	}
}

// A move that fails before its first delivery says none moved of all it
// counted, with the operation, and keeps the kind of the AMQP error.
func TestMoveCore_unstarted(t *testing.T) {
	t.Parallel()
	c := newMoveCore(Move{Vhost: "/", From: "q.dead", To: "q"}, "amqp://h:5672", 7, "", false, time.Unix(0, 0))
	e := c.Unstarted(&Error{Op: `consuming from "q.dead"`, Reason: "read tcp: i/o timeout."})
	want := `moved 0 of 7 messages from q.dead to q in vhost "/" (amqp://h:5672), then stopped: consuming from "q.dead" failed: ` +
		`read tcp: i/o timeout. The other 7 stay on q.dead`
	if !strings.HasPrefix(e.Error(), want) || !errors.Is(e, errConnectionLost) || e.Cause != ConnectionLost || c.Accepting() {
		t.Errorf("Unstarted: %v (kind %v), accepting %v; want %q..., errConnectionLost", e, e.Kind, c.Accepting(), want)
	}
	e = newMoveCore(Move{From: "q.dead", To: "q"}, "", 7, "", false, time.Unix(0, 0)).Unstarted(
		&Error{Op: "consuming", Reason: "ACCESS_REFUSED", Kind: ErrUnauthorized, Cause: QueuePermission})
	if !errors.Is(e, ErrUnauthorized) || e.Cause != QueuePermission || e.Moved != 0 || e.Total != 7 {
		t.Errorf("Unstarted of a refusal: %+v", e)
	}
	e = newMoveCore(Move{From: "q.dead", To: "q"}, "", 7, "", false, time.Unix(0, 0)).Unstarted(errors.New("channel closed"))
	if !strings.Contains(e.Error(), "then stopped: channel closed. The other 7") {
		t.Errorf("Unstarted of a plain error: %v", e)
	}
}

// The mover's bounds have their rows in the Operating guide's table of limits: the dial bound and
// the stall bound (the rest of the table: internal/provider's TestDocsLimitsTable).
func TestDocsMoverLimits(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/guides/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	for row, want := range map[string]time.Duration{"An AMQP connection": dialTimeout,
		"A move waiting for a delivery or a confirm": stallBound} {
		_, after, found := strings.Cut(string(b), "\n| "+row+" |")
		cell, _, _ := strings.Cut(after, "|")
		if d, err := time.ParseDuration(strings.Trim(strings.TrimSpace(cell), "`")); !found || err != nil || d != want {
			t.Errorf("the Operating guide's row %q says %q, the mover waits %s", row, cell, want)
		}
	}
}
