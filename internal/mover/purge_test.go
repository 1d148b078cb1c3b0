package mover

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// A purge removes the ready messages and answers how many; a missing queue
// is ErrNotFound naming it, a refused one ErrUnauthorized, cause
// QueuePermission.
func TestPurgeQueue(t *testing.T) {
	c, s, a := fakeBroker(t, 7)
	n, err := c.Purge(context.Background(), "/", "q.dead")
	if q, _ := s.Queue("/", "q.dead"); err != nil || n != 7 || *q.Messages != 0 {
		t.Fatalf("purged %d, %v; the management API counts %d; want 7, nil, 0", n, err, *q.Messages)
	}
	if n, err := c.Purge(context.Background(), "/", "q.dead"); n != 0 || err != nil {
		t.Errorf("an empty queue: %d, %v", n, err)
	}
	for _, tc := range []struct {
		queue string
		kind  error
		cause Cause
		says  string
	}{
		{"gone", ErrNotFound, noCause, `looking up "gone" at ` + a.URL() + ` failed: queue "gone" does not exist in vhost "/"`},
		{"q", ErrUnauthorized, QueuePermission, `purging "q" at ` + a.URL() + " failed: ACCESS_REFUSED"},
	} {
		s.PutMessages("/", "q", deadLetters(2)...)
		a.Refuse("/", "q")
		n, err := c.Purge(context.Background(), "/", tc.queue)
		var ae *Error
		if n != 0 || !errors.As(err, &ae) || !errors.Is(err, tc.kind) || ae.Cause != tc.cause || ae.Connecting ||
			!strings.Contains(err.Error(), tc.says) {
			t.Errorf("purging %s: %d, %v; want an *Error of kind %v saying %q", tc.queue, n, err, tc.kind, tc.says)
		}
	}
	if got := len(s.Messages("/", "q")); got != 4 {
		t.Errorf("a refused purge removed messages: q holds %d", got)
	}
}

// channelError: a channel closed with 404 is ErrNotFound naming the queue,
// 403 ErrUnauthorized with cause QueuePermission, another code or a failure
// that is no channel close keeps its reason and no kind.
func TestChannelError(t *testing.T) {
	c := moverAt("amqp://h:5672")
	for _, tc := range []struct {
		err    error
		kind   error
		reason string
		cause  Cause
	}{
		{&amqp.Error{Code: 404, Reason: "NOT_FOUND - no queue 'q'"}, ErrNotFound, `queue "q" does not exist in vhost "v"`, noCause},
		{&amqp.Error{Code: 403, Reason: "ACCESS_REFUSED - access to queue 'q'"}, ErrUnauthorized, "ACCESS_REFUSED - access to queue 'q'", QueuePermission},
		{&amqp.Error{Code: 406, Reason: "PRECONDITION_FAILED - x"}, nil, "PRECONDITION_FAILED - x", noCause},
		{errors.New("channel/connection is not open"), nil, "channel/connection is not open", noCause},
	} {
		err := c.channelError("purging", "v", "q", tc.err)
		var ae *Error
		if !errors.As(err, &ae) || ae.Kind != tc.kind || ae.Reason != tc.reason || ae.Cause != tc.cause ||
			ae.Op != "purging" || ae.URL != "amqp://h:5672" || ae.Connecting {
			t.Errorf("%v: got %#v", tc.err, err)
		}
	}
}

// A purge or a move tells Config.Wrote before it begins and after it ends, even when it failed
// (it may have moved messages before it failed).
func TestWroteAroundEachOperation(t *testing.T) {
	t.Parallel()
	m := moverAt("amqp://" + brokertest.ClosedAddr(t))
	var marks []string
	m.cfg.Credentials = func(context.Context, string) (string, string, error) {
		marks = append(marks, "dial")
		return "guest", "pw", nil
	}
	m.cfg.Wrote = func() { marks = append(marks, "wrote") }
	if _, err := m.Purge(context.Background(), "v", "q.dead"); err == nil {
		t.Fatal("a purge through a closed port succeeded")
	}
	if _, err := m.Move(context.Background(), Move{Vhost: "v", From: "q.dead", To: "q"}); err == nil {
		t.Fatal("a move through a closed port succeeded")
	}
	if got := strings.Join(marks, " "); got != "wrote dial wrote wrote dial wrote" {
		t.Errorf("got %q, want each operation's dial between two marks", got)
	}
}
