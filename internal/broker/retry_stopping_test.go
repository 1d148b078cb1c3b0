package broker

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A node whose application stops answers 404 to writes on connections
// already open for a few milliseconds, then closes them; a 4.3 node that
// starts refuses a guarded delete of an empty queue as "not empty" for a
// moment. Both were seen on the brokers of the matrix (rabbitmqctl stop_app
// and start_app with writes in flight). Each such answer is taken for what
// it says only when it holds: a 404 repeated once, a "not empty" with no
// restart seen.
func TestRetryStoppingAndStartingNode(t *testing.T) {
	declare := func(c *Client) error { return c.DeclareQueue(context.Background(), "/", "q", nil) }
	remove := func(c *Client) error { return c.DeleteQueue(context.Background(), "/", "q", true) }
	for _, tc := range []struct {
		name     string
		call     func(*Client) error
		answers  []scriptedAnswer
		want     error // nil: the request went through
		requests int64
	}{
		{"declaration 404 while stopping, then the port closes", declare,
			[]scriptedAnswer{{404, objectNotFound}, {dropConnection, ""}, {503, ""}}, nil, 4},
		{"delete 404 while stopping (the queue is still there)", remove,
			[]scriptedAnswer{{404, objectNotFound}, {dropConnection, ""}}, nil, 3},
		{"missing queue: 404 twice", remove,
			[]scriptedAnswer{{404, objectNotFound}, {404, objectNotFound}}, ErrNotFound, 2},
		{"missing vhost: declaration 404 twice", declare,
			[]scriptedAnswer{{404, objectNotFound}, {404, objectNotFound}}, ErrNotFound, 2},
		{"not empty while starting, after a restart", remove,
			[]scriptedAnswer{{503, ""}, {400, notEmpty43}, {400, notEmpty43}}, nil, 4},
		{"not empty with no restart seen", remove,
			[]scriptedAnswer{{400, notEmpty43}}, ErrNotEmpty, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scripted{answers: tc.answers}
			srv := httptest.NewServer(s)
			defer srv.Close()
			start := time.Now()
			err := tc.call(fastClient(t, srv.URL, time.Minute))
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if got := s.n.Load(); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
			elapsed := time.Since(start)
			if elapsed > time.Second {
				t.Errorf("took %s, want under 1s", elapsed)
			}
			// The stopping nodes seen closed their port within 10 ms of their
			// last 404; the pause leaves them 20 times that at least.
			if tc.answers[0].status == http.StatusNotFound && elapsed < 200*time.Millisecond {
				t.Errorf("the 404 was repeated after %s, want a pause of 200ms or more: a stopping node needs it to close its port", elapsed)
			}
			if n := s.unguarded.Load(); n != 0 {
				t.Errorf("%d DELETEs sent without if-empty=true: a retry must stay guarded", n)
			}
		})
	}
}

// A request that waited out a restart longer than recoveryWindow gets the
// whole window once the node answers again: the window counts from its first
// 404 after the restart was seen, not from its start nor from the 404 of the
// node beginning to stop.
func TestRecoveryWindowOpensAfterTheRestart(t *testing.T) {
	defer func(w time.Duration) { recoveryWindow = w }(recoveryWindow)
	recoveryWindow = 100 * time.Millisecond
	down := confirmPause + 3*recoveryWindow
	var n atomic.Int64
	start := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		switch since := time.Since(start); {
		case n.Add(1) == 1, since >= down && since < down+recoveryWindow/2:
			// stopping, on an open connection; then recovering its vhosts
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(objectNotFound))
		case since < down:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusCreated)
		}
	}))
	defer srv.Close()
	if err := fastClient(t, srv.URL, time.Minute).DeclareQueue(context.Background(), "/", "q", nil); err != nil {
		t.Fatalf("a declaration that waited out the restart failed on the recovery's 404: %v", err)
	}
}

// A queue that is really gone, answered 404 between faults that go on (a
// delete whose first answer was lost, behind a flaky proxy), is "not found"
// once recoveryWindow has passed since its first 404: the faults do not
// keep the window open until the retry budget runs out.
func TestNotFoundBetweenFaultsEnds(t *testing.T) {
	defer func(w time.Duration) { recoveryWindow = w }(recoveryWindow)
	recoveryWindow = 50 * time.Millisecond
	var answers []scriptedAnswer
	for range 1000 {
		answers = append(answers, scriptedAnswer{503, ""}, scriptedAnswer{404, objectNotFound})
	}
	s := &scripted{answers: answers}
	srv := httptest.NewServer(s)
	defer srv.Close()
	start := time.Now()
	err := fastClient(t, srv.URL, time.Minute).DeleteQueue(context.Background(), "/", "q", true)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	if elapsed := time.Since(start); elapsed > 20*recoveryWindow {
		t.Errorf("took %s, want about the recovery window of %s", elapsed, recoveryWindow)
	}
}
