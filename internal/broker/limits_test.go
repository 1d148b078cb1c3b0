package broker

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// The limits of the Operating guide's table ("Every limit"), each at both
// edges: the operation still going just inside the limit, and ended just
// outside it, counted from the operation's start. Where the start and the
// first failure could be confused, the first attempt is slow to fail, so
// that a limit counted from the wrong moment lets the late answer in. The
// defaults are read once (TestLimitDefaults), never waited out.
//
// The retry transport's limits are decided by a fake clock (withClock) at
// the times each row sets. request_timeout and the AMQP dial bound are the
// network's own deadlines, on the real clock: there the points are 70% and
// 140% of a limit of 2 s, so that a stall of half a second on a busy machine
// crosses no edge, while a limit doubled (200%) or halved (50%) still lands
// on the wrong side of one.

// The settings and defaults a client built without them uses.
func TestLimitDefaults(t *testing.T) {
	t.Parallel()
	c := mustNew(t, Config{Endpoint: "http://rabbit:15672", Username: "u", Password: "p"})
	if c.transport.timeout != DefaultRequestTimeout || c.transport.budget != defaultRetryBudget {
		t.Errorf("request_timeout %s, retry_budget %s; want %s and %s", c.transport.timeout, c.transport.budget,
			DefaultRequestTimeout, defaultRetryBudget)
	}
	if c.transport.tm != (timing{}).withDefaults() {
		t.Errorf("timing %+v, want the defaults (TestTimingDefaults)", c.transport.tm)
	}
	if want := defaultRetryBudget + 2*DefaultRequestTimeout; c.http.Timeout != want {
		t.Errorf("backstop %s, want %s: retry_budget + request_timeout, and one more request_timeout", c.http.Timeout, want)
	}
}

// No attempt starts later than retry_budget after the request began: a
// broker that answers 503 until just inside the budget is read, one that
// answers 503 until just after it is reported. The first attempt fails only
// after slowFirst, so a budget counted from the first failure, or from the
// last attempt, reads the late broker.
func TestLimit_retryBudget(t *testing.T) {
	t.Parallel()
	const budget, margin, slowFirst = 600 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond
	for _, tc := range []struct {
		name    string
		healsAt time.Duration // from the request's start
		read    bool
	}{
		{"heals just inside", budget - margin, true},
		{"heals just outside", budget + margin, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := brokertest.New(t)
			s.AddVhost("v", "classic")
			tm := fastTiming
			tm.backoffFirst, tm.backoffMax = 5*time.Millisecond, 5*time.Millisecond
			c, clock := withClock(fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: budget, timing: tm}))
			start := clock.now()
			var n atomic.Int64
			s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				if n.Add(1) == 1 {
					clock.advance(slowFirst)
				}
				if clock.since(start) >= tc.healsAt {
					return false
				}
				w.WriteHeader(http.StatusServiceUnavailable)
				return true
			})
			_, err := c.GetVhost(context.Background(), "v")
			if tc.read && err != nil {
				t.Fatalf("a broker back %s after the start, inside retry_budget %s: %v", tc.healsAt, budget, err)
			}
			var e *Error
			if !tc.read && (!errors.As(err, &e) || e.Status != http.StatusServiceUnavailable) {
				t.Fatalf("a broker back %s after the start, outside retry_budget %s: got %v, want its last 503", tc.healsAt, budget, err)
			}
		})
	}
}

// request_timeout bounds each attempt, from the attempt's start: an answer
// (its headers, or its body) just inside it is read, one just after it is
// not; and the attempt after
// one that timed out has the whole request_timeout again (a timeout counted
// from the request's start would cut it).
func TestLimit_requestTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 2 * time.Second
	const inside, outside = timeout * 7 / 10, timeout * 14 / 10
	for _, tc := range []struct {
		name   string
		budget time.Duration
		delays []time.Duration // of each attempt's answer
		read   bool
	}{
		{"answer just inside", -1, []time.Duration{inside}, true},
		{"answer just outside", -1, []time.Duration{outside}, false},
		{"a retry's answer just inside its own", time.Minute, []time.Duration{time.Minute, inside}, true},
		// The headers at once, the body late: only request_timeout bounds
		// reading it (the transport's header timeout is over).
		{"body just inside", -1, []time.Duration{-inside}, true},
		{"body just outside", -1, []time.Duration{-outside}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := brokertest.New(t)
			s.AddVhost("v", "classic")
			var n atomic.Int64
			s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				i := int(n.Add(1)) - 1
				switch {
				case i >= len(tc.delays):
				case tc.delays[i] < 0: // headers now, the body after -delay
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusOK)
					if f, ok := w.(http.Flusher); ok {
						f.Flush()
					}
					_ = sleepContext(r.Context(), -tc.delays[i])
					_, _ = w.Write([]byte(`{"name":"v","default_queue_type":"classic"}`))
					return true
				default:
					_ = sleepContext(r.Context(), tc.delays[i])
				}
				return false
			})
			c := mustNew(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RequestTimeout: timeout, RetryBudget: tc.budget, timing: fastTiming})
			_, err := c.GetVhost(context.Background(), "v")
			if tc.read && err != nil {
				t.Fatalf("answers after %v, request_timeout %s: %v", tc.delays, timeout, err)
			}
			late := len(tc.delays) > 0 && tc.delays[0] < 0
			e := errOf(err)
			na, _ := errors.AsType[*NoAnswerError](e.Err)
			switch {
			case tc.read:
			case late && e.Status != http.StatusOK:
				t.Fatalf("a body after %s, request_timeout %s: got %v, want the answer unread", -tc.delays[0], timeout, err)
			case !late && (!errors.Is(err, ErrUnreachable) || na == nil || na.Timeout != timeout):
				t.Fatalf("an answer after %v, request_timeout %s: got %v, want no answer within request_timeout", tc.delays, timeout, err)
			}
		})
	}
}

// Before the broker has ever answered, a refused connection is tried again
// for firstContact from the request's start: a broker that starts listening
// just inside it is read, one that starts just after it is reported as a
// first contact. The first attempt is refused only after slowFirst (a dial
// that takes a while), so a window counted from the first failure, or from
// the last attempt, reads the late broker.
func TestLimit_firstContact(t *testing.T) {
	t.Parallel()
	const window, margin, slowFirst = 500 * time.Millisecond, 150 * time.Millisecond, 250 * time.Millisecond
	for _, tc := range []struct {
		name    string
		opensAt time.Duration // from the request's start
		read    bool
	}{
		{"opens just inside", window - margin, true},
		{"opens just outside", window + margin, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := brokertest.New(t)
			s.AddVhost("v", "classic")
			tm := fastTiming
			tm.backoffFirst, tm.backoffMax, tm.firstContact = 5*time.Millisecond, 5*time.Millisecond, window
			c, clock := withClock(fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: time.Minute, timing: tm}))
			start := clock.now()
			open := c.transport.base
			var n atomic.Int64
			c.transport.base = roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if n.Add(1) == 1 {
					clock.advance(slowFirst)
				}
				if clock.since(start) >= tc.opensAt {
					return open.RoundTrip(r)
				}
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
			})
			_, err := c.GetVhost(context.Background(), "v")
			if tc.read && err != nil {
				t.Fatalf("a broker listening %s after the start, inside the window of %s: %v", tc.opensAt, window, err)
			}
			if !tc.read {
				checkFirstContact(t, err, strings.TrimPrefix(s.URL, "http://"))
			}
		})
	}
}

// A restart is remembered for restartMemory from its last sign, not its
// first: a 404 that comes later than restartMemory after the first sign but
// within it after a second one is still tried again for the recovery window.
// (TestTiming_restartMemory holds both edges from one sign.)
func TestLimit_restartMemoryFromLastSign(t *testing.T) {
	t.Parallel()
	const memory = 800 * time.Millisecond
	tm := fastTiming
	tm.restartMemory, tm.recoveryWindow = memory, 60*time.Millisecond
	s := brokertest.New(t)
	c, clock := withClock(fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: time.Minute, timing: tm}))
	first := seeRestart(t, c, s, "first")
	clock.advance(memory/2 - clock.since(first))
	seeRestart(t, c, s, "last")
	clock.advance(memory + memory/4 - clock.since(first))
	times := attemptTimes(c)
	if err := c.DeleteQueue(context.Background(), "/", "gone", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	if n := len(times()); n <= 2 {
		t.Errorf("a 404 %s after the first sign of a restart and %s after the last was sent %d times; want it tried for the recovery window",
			memory+memory/4, memory-memory/4, n)
	}
}
