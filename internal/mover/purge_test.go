package mover

import (
	"context"
	"errors"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A purge removes the ready messages and answers how many; a missing queue
// is ErrNotFound naming it, a refused one ErrUnauthorized with the
// permission it needs.
func TestPurgeQueue(t *testing.T) {
	c, s, a := fakeBroker(t)
	s.PutMessages("/", "q.dead", deadLetters(7)...)
	n, err := c.PurgeQueue(context.Background(), "/", "q.dead")
	if q, _ := s.Queue("/", "q.dead"); err != nil || n != 7 || *q.Messages != 0 {
		t.Fatalf("purged %d, %v; the management API counts %d; want 7, nil, 0", n, err, *q.Messages)
	}
	if n, err := c.PurgeQueue(context.Background(), "/", "q.dead"); n != 0 || err != nil {
		t.Errorf("an empty queue: %d, %v", n, err)
	}
	for _, tc := range []struct {
		queue string
		kind  error
		says  string
	}{
		{"gone", ErrNotFound, `looking up "gone" at ` + a.URL() + ` failed: queue "gone" does not exist in vhost "/"`},
		{"q", ErrUnauthorized, `purging "q" at ` + a.URL() + " failed: ACCESS_REFUSED"},
	} {
		s.PutMessages("/", "q", deadLetters(2)...)
		a.Refuse("/", "q")
		n, err := c.PurgeQueue(context.Background(), "/", tc.queue)
		var ae *AMQPError
		if n != 0 || !errors.As(err, &ae) || !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("purging %s: %d, %v; want an *AMQPError of kind %v saying %q", tc.queue, n, err, tc.kind, tc.says)
		}
	}
	if got := len(s.Messages("/", "q")); got != 4 {
		t.Errorf("a refused purge removed messages: q holds %d", got)
	}
}

// channelError: a channel closed with 404 is ErrNotFound naming the queue,
// 403 ErrUnauthorized with the permissions needed, another code or a failure
// that is no channel close keeps its reason and no kind.
func TestChannelError(t *testing.T) {
	c := amqpClient(t, "amqp://h:5672")
	for _, tc := range []struct {
		err          error
		kind         error
		reason, hint string
	}{
		{&amqp.Error{Code: 404, Reason: "NOT_FOUND - no queue 'q'"}, ErrNotFound, `queue "q" does not exist in vhost "v"`, ""},
		{&amqp.Error{Code: 403, Reason: "ACCESS_REFUSED - access to queue 'q'"}, ErrUnauthorized, "ACCESS_REFUSED - access to queue 'q'", "need read on it"},
		{&amqp.Error{Code: 406, Reason: "PRECONDITION_FAILED - x"}, nil, "PRECONDITION_FAILED - x", ""},
		{errors.New("channel/connection is not open"), nil, "channel/connection is not open", ""},
	} {
		err := c.channelError("purging", "v", "q", tc.err)
		var ae *AMQPError
		if !errors.As(err, &ae) || ae.Kind != tc.kind || ae.Reason != tc.reason || !strings.Contains(ae.Hint, tc.hint) ||
			ae.Op != "purging" || ae.URL != "amqp://h:5672" || (tc.hint == "") != (ae.Hint == "") {
			t.Errorf("%v: got %#v", tc.err, err)
		}
	}
}
