package broker

import (
	"cmp"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// queuesOf lists vhost through c with what and fresh, for a test that wants
// only the queues.
func queuesOf(c *Client, ctx context.Context, vhost string, what Detail, fresh Freshness) (map[string]Queue, error) {
	l, err := c.ListQueues(ctx, vhost, what, fresh)
	return l.Queues, err
}

// fakeClock is a retry transport's clock that the test moves: a pause moves
// it by its length at once, and each reading by a microsecond (time goes on
// while attempts run, as on a real clock). The rules are then decided at the
// times the test sets, however slow the machine.
type fakeClock struct{ at atomic.Int64 } // nanoseconds since clockEpoch

var clockEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (k *fakeClock) now() time.Time {
	return clockEpoch.Add(time.Duration(k.at.Add(int64(time.Microsecond))))
}

func (k *fakeClock) advance(d time.Duration) { k.at.Add(int64(d)) }

func (k *fakeClock) since(t time.Time) time.Duration { return k.now().Sub(t) }

func (k *fakeClock) pause(ctx context.Context, d time.Duration) error {
	if ctx.Err() == nil {
		k.advance(d)
	}
	return ctx.Err()
}

// mustNew is New(cfg), failing the test on an error.
func mustNew(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fakeClient is mustNew(cfg) for a client of a fake broker: it gives up at
// the first failure (RetryBudget -1) and waits 5 s for an answer, unless cfg
// sets a retry budget or a request timeout of its own. (cfg.timing left zero
// is the default clock; fastTiming is for a test with retries not of them.)
func fakeClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	cfg.RetryBudget = cmp.Or(cfg.RetryBudget, -1)
	cfg.RequestTimeout = cmp.Or(cfg.RequestTimeout, 5*time.Second)
	return mustNew(t, cfg)
}

// withClock has c's retry transport decide by a fake clock, and returns c and
// the clock. Call it before the client is used.
func withClock(c *Client) (*Client, *fakeClock) {
	k := &fakeClock{}
	c.transport.now, c.transport.pause = k.now, k.pause
	return c, k
}

// errOf is the *Error err holds, or one of Cause -1 (and no other field) when
// it holds none.
func errOf(err error) *Error {
	e, _ := errors.AsType[*Error](err)
	return cmp.Or(e, &Error{Cause: -1})
}
