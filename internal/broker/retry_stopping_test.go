package broker

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// A node whose application stops answers 404 to writes on connections
// already open for a few milliseconds, then closes them; a 4.3 node that
// starts refuses a guarded delete of an empty queue as "not empty" for a
// moment. Both were seen on the brokers of the matrix (rabbitmqctl stop_app
// and start_app with writes in flight). Each such answer is taken for what
// it says only when it holds: a 404 repeated once, a "not empty" with no
// restart seen.
func TestRetryStoppingAndStartingNode(t *testing.T) {
	t.Parallel()
	declare := func(c *Client) error { return c.DeclareQueue(context.Background(), "/", "q", nil) }
	remove := func(c *Client) error { return c.DeleteQueue(context.Background(), "/", "q", true) }
	notFound := brokertest.Reply(404, brokertest.ObjectNotFound)
	notEmpty := brokertest.Reply(400, brokertest.NotEmpty43)
	for _, tc := range []struct {
		name     string
		call     func(*Client) error
		answers  []brokertest.Answer
		want     error // nil: the request went through
		requests int
	}{
		{"declaration 404 while stopping, then the port closes", declare,
			[]brokertest.Answer{notFound, brokertest.Drop, brokertest.Reply(503, "")}, nil, 4},
		{"delete 404 while stopping (the queue is still there)", remove,
			[]brokertest.Answer{notFound, brokertest.Drop}, nil, 3},
		{"missing queue: 404 twice", remove, []brokertest.Answer{notFound, notFound}, ErrNotFound, 2},
		{"missing vhost: declaration 404 twice", declare, []brokertest.Answer{notFound, notFound}, ErrNotFound, 2},
		{"not empty while starting, after a restart", remove,
			[]brokertest.Answer{brokertest.Reply(503, ""), notEmpty, notEmpty}, nil, 4},
		{"not empty with no restart seen", remove, []brokertest.Answer{notEmpty}, ErrNotEmpty, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := brokertest.New(t)
			s.PutQueue("/", brokertest.Queue{Name: "q", Durable: true, Messages: brokertest.Count(0)})
			s.Script(nil, tc.answers...)
			c, _ := withClock(fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: time.Minute, timing: fastTiming}))
			err := tc.call(c)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if got := len(s.Requests()); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
			guarded := func(r string) bool { return strings.Contains(r, "if-empty=true") }
			if u := slices.DeleteFunc(s.RequestsMatching("DELETE "), guarded); len(u) != 0 {
				t.Errorf("DELETEs sent without if-empty=true: %q; a retry must stay guarded", u)
			}
		})
	}
}

// A request that waited out a restart longer than the recovery window gets
// the whole window once the node answers again: the window counts from its
// first 404 after the restart was seen, not from its start nor from the 404
// of the node beginning to stop.
func TestRecoveryWindowOpensAfterTheRestart(t *testing.T) {
	t.Parallel()
	tm := fastTiming
	tm.recoveryWindow = 100 * time.Millisecond
	down := tm.confirmPause + 3*tm.recoveryWindow
	var n atomic.Int64
	s := brokertest.New(t)
	c, clock := withClock(fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: time.Minute, timing: tm}))
	start := clock.now()
	s.Intercept(func(w http.ResponseWriter, _ *http.Request) bool {
		switch since := clock.since(start); {
		case n.Add(1) == 1, since >= down && since < down+tm.recoveryWindow/2:
			// stopping, on an open connection; then recovering its vhosts
			brokertest.ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
		case since < down:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			return false // the fake declares the queue
		}
		return true
	})
	if err := c.DeclareQueue(context.Background(), "/", "q", nil); err != nil {
		t.Fatalf("a declaration that waited out the restart failed on the recovery's 404: %v", err)
	}
}

// A queue that is really gone, answered 404 between faults that go on (a
// delete whose first answer was lost, behind a flaky proxy), is "not found"
// once the recovery window has passed since its first 404: the faults do not
// keep the window open until the retry budget runs out.
func TestNotFoundBetweenFaultsEnds(t *testing.T) {
	t.Parallel()
	var answers []brokertest.Answer
	for range 1000 {
		answers = append(answers, brokertest.Reply(503, ""), brokertest.Reply(404, brokertest.ObjectNotFound))
	}
	s := brokertest.New(t)
	s.Script(nil, answers...)
	c, clock := withClock(fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: time.Minute, timing: fastTiming}))
	start := clock.now()
	err := c.DeleteQueue(context.Background(), "/", "q", true)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	if elapsed := clock.since(start); elapsed >= 2*fastTiming.recoveryWindow {
		t.Errorf("took %s, want about the recovery window of %s", elapsed, fastTiming.recoveryWindow)
	}
}
