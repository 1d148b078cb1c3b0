package mover

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// moverAt is a Mover of u as the user guest, whose whoami names guest without the impersonator
// tag.
func moverAt(u string) *Mover {
	return New(Config{URL: u,
		Credentials: func(context.Context, string) (string, string, error) { return "guest", "s3cret-pw", nil },
		Whoami:      func(context.Context) (string, bool) { return "guest", false }})
}

// fakeBroker is a Mover on the fake broker's AMQP port, with the queues q and q.dead in "/" (the
// fake's management API holds them), and deadLetters(dead) on q.dead.
func fakeBroker(t *testing.T, dead int) (*Mover, *brokertest.Server, *brokertest.AMQP) {
	t.Helper()
	s := brokertest.New(t)
	s.PutQueue("/", brokertest.Queue{Name: "q"})
	s.PutQueue("/", brokertest.Queue{Name: "q.dead"})
	s.PutMessages("/", "q.dead", deadLetters(dead)...)
	a := s.ServeAMQP(t)
	return moverAt(a.URL()), s, a
}

// deadLetters are n messages m-0, m-1, ... published by guest.
func deadLetters(n int) (msgs []brokertest.Message) {
	for i := range n {
		msgs = append(msgs, brokertest.NewMessage(fmt.Sprintf("m-%d", i), "guest", fmt.Sprintf("body %d", i)))
	}
	return msgs
}

// ids are the message ids of msgs.
func ids(msgs []brokertest.Message) (out []string) {
	for _, m := range msgs {
		out = append(out, m.ID())
	}
	return out
}

// checkNoLoss checks that q.dead holds, in order, every message after the first moved (or, unless
// exact, more of the last ones too), and that q holds, in order, every message before those.
func checkNoLoss(t *testing.T, s *brokertest.Server, total, moved int, exact bool) {
	t.Helper()
	all := ids(deadLetters(total))
	stayed, copied := ids(s.Messages("/", "q.dead")), ids(s.Messages("/", "q"))
	from := total - len(stayed) // the first message still on q.dead
	if from < 0 || from > moved || exact && from != moved || !slices.Equal(stayed, all[from:]) {
		t.Fatalf("q.dead holds %v, want %v", stayed, all[moved:])
	}
	if len(copied) < from || !slices.Equal(copied[:from], all[:from]) {
		t.Errorf("q holds %v, want %v first", copied, all[:from])
	}
}

// atPublish answers the at-th publish with f, after doing do, and routes every other publish.
func atPublish(at int, f brokertest.PublishFault, do func()) func(int, brokertest.Publish) brokertest.PublishFault {
	return func(n int, _ brokertest.Publish) brokertest.PublishFault {
		if n != at {
			return brokertest.Route
		}
		do()
		return f
	}
}
