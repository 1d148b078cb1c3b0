package broker

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// Each timing rule of the retry transport, at both edges: just inside
// (the rule still applies) and just outside (it no longer does). Each client
// has its own settings (Config.timing) and a fake clock (withClock) that its
// pauses move: the rules are decided at the times the test sets, not by how
// long a pause or an answer took on a busy machine.

// attemptTimes records when each attempt of c began, by c's clock. A call's
// attempts run one after another in the caller's goroutine, so the record,
// read once the call returned, needs no lock.
func attemptTimes(c *Client) func() []time.Time {
	var at []time.Time
	c.transport.onAttempt = func(*http.Request) { at = append(at, c.transport.now()) }
	return func() []time.Time { return at }
}

// seeRestart has c meet a 503 (a restarting broker) once, while reading vhost
// (a vhost of its own for each sign: a vhost's answer is kept), and returns
// when, by c's clock.
func seeRestart(t *testing.T, c *Client, s *brokertest.Server, vhost string) time.Time {
	t.Helper()
	s.AddVhost(vhost, "classic")
	s.Script(brokertest.Path("vhosts/"+vhost), brokertest.Reply(503, ""))
	if _, err := c.GetVhost(context.Background(), vhost); err != nil {
		t.Fatal(err)
	}
	return c.transport.now()
}

// A 404 with no restart seen is repeated once, confirmPause later: not
// sooner, and not after a longer pause.
func TestTiming_confirmPause(t *testing.T) {
	t.Parallel()
	tm := fastTiming
	tm.confirmPause = 200 * time.Millisecond
	tm.recoveryWindow = 2 * time.Second
	s := brokertest.New(t)
	c, _ := withClock(fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: time.Minute, timing: tm}))
	times := attemptTimes(c)
	if err := c.DeleteQueue(context.Background(), "/", "gone", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	at := times()
	if len(at) != 2 {
		t.Fatalf("%d attempts, want 2 (the 404 confirmed once)", len(at))
	}
	if gap := at[1].Sub(at[0]); gap < tm.confirmPause || gap >= tm.confirmPause*3/2 {
		t.Errorf("the 404 was repeated after %s, want confirmPause %s", gap, tm.confirmPause)
	}
}

// After a restart was seen, a 404 is tried again for recoveryWindow from the
// request's first 404: a vhost that recovers just inside the window is
// found; one that does not is "not found" just after it.
func TestTiming_recoveryWindow(t *testing.T) {
	t.Parallel()
	const window = 300 * time.Millisecond
	for _, tc := range []struct {
		name     string
		recovers time.Duration // how long after the first 404 the 404s end
		want     error
	}{
		{"recovers just inside", window - 100*time.Millisecond, nil},
		{"recovers just outside", window + 100*time.Millisecond, ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tm := fastTiming
			tm.backoffFirst, tm.backoffMax, tm.recoveryWindow = 5*time.Millisecond, 5*time.Millisecond, window
			s := brokertest.New(t)
			c, clock := withClock(fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: time.Minute, timing: tm}))
			seeRestart(t, c, s, "restarted")
			var first atomic.Int64 // by the clock, 0 before the first 404
			s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				now := clock.now()
				first.CompareAndSwap(0, now.UnixNano())
				if now.Sub(time.Unix(0, first.Load())) >= tc.recovers {
					return false
				}
				brokertest.ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
				return true
			})
			start := clock.now()
			err := c.DeclareQueue(context.Background(), "/", "q", nil)
			took := clock.since(start)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v after %s, want %v", err, took, tc.want)
			}
			if tc.want != nil && (took < window || took >= tc.recovers) {
				t.Errorf("gave up after %s, want at the end of the window of %s", took, window)
			}
		})
	}
}

// The last pause before the recovery window closes is shortened to end with
// it: a request does not overrun the window by a long backoff.
func TestTiming_lastPauseEndsWithRecoveryWindow(t *testing.T) {
	t.Parallel()
	tm := fastTiming
	tm.backoffFirst, tm.backoffMax, tm.recoveryWindow = 800*time.Millisecond, 800*time.Millisecond, 150*time.Millisecond
	s := brokertest.New(t)
	c, clock := withClock(fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: time.Minute, timing: tm}))
	seeRestart(t, c, s, "restarted")
	start := clock.now()
	if err := c.DeleteQueue(context.Background(), "/", "gone", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	if took := clock.since(start); took < tm.recoveryWindow || took >= 2*tm.recoveryWindow {
		t.Errorf("took %s, want the recovery window of %s: pauses of 400-800ms must end with it", took, tm.recoveryWindow)
	}
}

// A restart is remembered for restartMemory: a 404 just inside it is tried
// again for the recovery window; one just outside is confirmed once only.
func TestTiming_restartMemory(t *testing.T) {
	t.Parallel()
	const memory = 400 * time.Millisecond
	for _, tc := range []struct {
		name  string
		after time.Duration // from the restart to the 404
		retry bool
	}{
		{"just inside", memory - 150*time.Millisecond, true},
		{"just outside", memory + 150*time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tm := fastTiming
			tm.restartMemory, tm.recoveryWindow = memory, 60*time.Millisecond
			s := brokertest.New(t)
			c, clock := withClock(fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: time.Minute, timing: tm}))
			seen := seeRestart(t, c, s, "restarted")
			clock.advance(tc.after - clock.since(seen))
			times := attemptTimes(c)
			if err := c.DeleteQueue(context.Background(), "/", "gone", true); !errors.Is(err, ErrNotFound) {
				t.Fatalf("got %v, want ErrNotFound", err)
			}
			if n := len(times()); tc.retry && n <= 2 || !tc.retry && n != 2 {
				t.Errorf("%s after the restart, a 404 was sent %d times; want retries: %v", tc.after, n, tc.retry)
			}
		})
	}
}

// Before the broker has answered, a refused connection is tried again for
// firstContact (or the retry budget, when shorter), then reported naming
// host:port and what to check.
func TestTiming_firstContact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		budget, window time.Duration
		ends           time.Duration
	}{
		{"window inside the budget", time.Minute, 200 * time.Millisecond, 200 * time.Millisecond},
		{"budget inside the window", 200 * time.Millisecond, time.Minute, 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := brokertest.ClosedAddr(t)
			tm := fastTiming
			tm.backoffFirst, tm.backoffMax, tm.firstContact = 10*time.Millisecond, 10*time.Millisecond, tc.window
			c, clock := withClock(fakeClient(t, Config{Endpoint: "http://" + addr, Username: "u", Password: "p", RetryBudget: tc.budget, timing: tm}))
			times := attemptTimes(c)
			start := clock.now()
			_, err := c.GetVhost(context.Background(), "/")
			took := clock.since(start)
			checkFirstContact(t, err, addr)
			if took < tc.ends || took >= tc.ends*3/2 {
				t.Errorf("gave up after %s, want after %s", took, tc.ends)
			}
			if n := len(times()); n < 2 {
				t.Errorf("%d attempts, want it tried again within %s", n, tc.ends)
			}
		})
	}
}

// checkFirstContact fails the test unless err reports a first contact with
// addr refused, naming addr and the refusal.
func checkFirstContact(t *testing.T, err error, addr string) {
	t.Helper()
	if e := errOf(err); !errors.Is(err, ErrUnreachable) || e.Cause != CauseFirstContact || e.Addr != addr || e.Unresolved ||
		!strings.Contains(err.Error(), "nothing answered at "+addr) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("got %v (%#v), want a refused first contact at %s", err, e, addr)
	}
}

// With the default settings, a closed port is reported within 15 s (by the
// client's clock, which its pauses move).
func TestTiming_firstContactDefault(t *testing.T) {
	t.Parallel()
	addr := brokertest.ClosedAddr(t)
	// The default limits.
	c, clock := withClock(mustNew(t, Config{Endpoint: "http://" + addr, Username: "guest", Password: "guest"}))
	start := clock.now()
	_, err := c.GetVhost(context.Background(), "/")
	took := clock.since(start)
	checkFirstContact(t, err, addr)
	if took > 15*time.Second || took < defaultFirstContact {
		t.Errorf("took %s, want from %s to 15s", took, defaultFirstContact)
	}
	t.Logf("after %s: %v", took.Round(time.Millisecond), err)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
