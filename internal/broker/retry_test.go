package broker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

func TestBackoffBounds(t *testing.T) {
	t.Parallel()
	for _, tm := range []timing{
		timing{}.withDefaults(),
		{backoffFirst: 3 * time.Millisecond, backoffMax: 20 * time.Millisecond},
	} {
		// The ceiling of pause n: backoffFirst doubled n-1 times, at most
		// backoffMax; written out for the defaults.
		ceiling := func(n int) time.Duration {
			d := tm.backoffFirst
			for range n - 1 {
				d = min(2*d, tm.backoffMax)
			}
			return d
		}
		for n := 1; n <= 40; n++ {
			lo, hi := ceiling(n)/2, ceiling(n)
			for range 50 {
				if d := tm.backoff(n); d < lo || d > hi {
					t.Fatalf("%+v: backoff(%d) = %s, want from %s to %s", tm, n, d, lo, hi)
				}
			}
		}
	}
	def := timing{}.withDefaults()
	for n, want := range map[int]time.Duration{1: 250 * time.Millisecond, 2: 500 * time.Millisecond, 5: 4 * time.Second, 6: 5 * time.Second, 100: 5 * time.Second} {
		var top time.Duration
		for range 200 {
			top = max(top, def.backoff(n))
		}
		if top > want || top < want*3/4 {
			t.Errorf("default backoff(%d): longest of 200 draws %s, want up to %s", n, top, want)
		}
	}
}

func TestTransientClassification(t *testing.T) {
	bodies := map[*http.Response]string{}
	answer := func(status int, body string) *http.Response {
		r := &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
			Body: io.NopCloser(strings.NewReader(body))}
		bodies[r] = body
		return r
	}
	get, _ := http.NewRequest(http.MethodGet, "http://x/api/queues/%2F/q", nil)
	put, _ := http.NewRequest(http.MethodPut, "http://x/api/queues/%2F/q", nil)
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name  string
		req   *http.Request
		resp  *http.Response
		err   error
		retry bool
	}{
		{"200", get, answer(200, `[]`), nil, false},
		{"connection refused", get, nil, refused, true},
		{"connection reset", get, nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{"EOF", get, nil, io.ErrUnexpectedEOF, true},
		{"no answer in time", get, nil, errors.New("no answer within request_timeout 1s"), true},
		{"cancelled", get, nil, context.Canceled, false},
		{"certificate", get, nil, &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, false},
		{"certificate in text only", get, nil, errors.New("tls: failed to verify certificate: x509: certificate signed by unknown authority"), true},
		{"500", get, answer(500, `{"error":"Internal Server Error"}`), nil, true},
		{"502", get, answer(502, ``), nil, true},
		{"503", get, answer(503, ``), nil, true},
		{"504", put, answer(504, ``), nil, true},
		{"401", get, answer(401, `{"error":"not_authorized","reason":"Login failed"}`), nil, false},
		{"401 access refused", put, answer(401, `{"error":"not_authorized","reason":"Access refused."}`), nil, false},
		{"403", put, answer(403, `{"error":"forbidden"}`), nil, false},
		{"400 conflict", put, answer(400, `{"error":"bad_request","reason":"PRECONDITION_FAILED - inequivalent arg 'x-message-ttl'"}`), nil, false},
		{"400 metadata store", put, answer(400, `{"error":"bad_request","reason":"cannot declare queue 'q' in vhost '/' because the metadata store operation timed out"}`), nil, true},
		{"500 metadata store", get, answer(500, `{"error":"timeout","reason":"the metadata store operation timed out"}`), nil, true},
		{"404 get", get, answer(404, brokertest.ObjectNotFound), nil, false},
		{"404 put vhost recovering", put, answer(404, brokertest.ObjectNotFound), nil, true},
		{"404 put node down", put, answer(404, `{"error":"Object Not Found","reason":"process is stopped by supervisor"}`), nil, true},
		{"404 get node down", get, answer(404, `{"error":"Object Not Found","reason":"process is stopped by supervisor"}`), nil, false},
	} {
		why := transient(tc.req, tc.resp, tc.err).why
		if (why != "") != tc.retry {
			t.Errorf("%s: transient = %q, want retry %v", tc.name, why, tc.retry)
		}
		if tc.resp != nil {
			// Whatever transient read, the body is still there for the caller.
			if b, _ := io.ReadAll(tc.resp.Body); string(b) != bodies[tc.resp] {
				t.Errorf("%s: the answer's body became %q, want %q", tc.name, b, bodies[tc.resp])
			}
		}
	}
}

// fastTiming is a clock for tests that do not test it: pauses of a
// millisecond.
var fastTiming = timing{backoffFirst: time.Millisecond, backoffMax: time.Millisecond, confirmPause: time.Millisecond,
	recoveryWindow: 500 * time.Millisecond, restartMemory: time.Minute, firstContact: time.Second}

func TestRetryRidesThroughTransientAnswers(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.AddVhost("v", "classic") // names its default queue type: GetVhost then asks nothing more
	s.Script(nil, brokertest.Reply(503, ``), brokertest.Reply(502, ``), brokertest.Reply(504, ``),
		brokertest.Reply(500, `{"error":"timeout","reason":"the metadata store operation timed out"}`))
	if _, err := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: time.Minute, timing: fastTiming}).GetVhost(context.Background(), "v"); err != nil {
		t.Fatal(err)
	}
	if got := len(s.Requests()); got != 5 {
		t.Errorf("%d requests, want 5", got)
	}
}

func TestRetryDeclareOnRestartingNode(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.Script(nil, brokertest.Reply(404, brokertest.StoppedBySupervisor),
		brokertest.Reply(400, `{"error":"bad_request","reason":"cannot declare queue 'q' because the metadata store operation timed out"}`))
	if err := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: time.Minute, timing: fastTiming}).DeclareQueue(context.Background(), "/", "q", nil); err != nil {
		t.Fatal(err)
	}
	if got := len(s.Requests()); got != 3 {
		t.Errorf("%d requests, want 3", got)
	}
}

func TestNoRetryOfRefusals(t *testing.T) {
	t.Parallel()
	for _, a := range []struct {
		status int
		body   string
		kind   error
	}{
		{401, brokertest.LoginFailed310, ErrUnauthorized},
		{403, `{"error":"forbidden","reason":"Access refused."}`, ErrUnauthorized},
		{400, `{"error":"bad_request","reason":"PRECONDITION_FAILED - inequivalent arg 'x-max-priority'"}`, ErrArgumentsConflict},
	} {
		s := brokertest.New(t)
		s.Script(nil, brokertest.Reply(a.status, a.body))
		err := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: time.Minute, timing: fastTiming}).DeclareQueue(context.Background(), "/", "q", nil)
		if !errors.Is(err, a.kind) {
			t.Errorf("HTTP %d: got %v, want %v", a.status, err, a.kind)
		}
		if got := len(s.Requests()); got != 1 {
			t.Errorf("HTTP %d was sent %d times: a refusal must not be retried", a.status, got)
		}
	}
}

// Once the broker has answered, a refused connection is a restart: it is
// tried again until the retry budget runs out, past the first-contact window.
func TestRetryBudgetRunsOut(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.AddVhost("v", "classic")
	tm := fastTiming
	tm.firstContact = 20 * time.Millisecond
	const budget = 200 * time.Millisecond
	c := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: budget, timing: tm})
	if _, err := c.GetVhost(context.Background(), "v"); err != nil {
		t.Fatal(err)
	}
	s.Close() // the broker stops: every connection is refused
	var attempts atomic.Int64
	c.transport.onAttempt = func(*http.Request) { attempts.Add(1) }
	start := time.Now()
	_, err := c.GetQueue(context.Background(), "v", "q", Declared)
	took := time.Since(start)
	var e *Error
	var be *BudgetError
	if !errors.Is(err, ErrUnreachable) || !errors.As(err, &e) || !errors.As(e.Err, &be) || be.Budget != 200*time.Millisecond ||
		be.Attempts != int(attempts.Load()) || errOf(err).Cause != CauseNoAnswer || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("got %v, want an unreachable error naming the budget and the cause", err)
	}
	if attempts.Load() < 2 {
		t.Errorf("%d attempts, want the request tried again within the budget", attempts.Load())
	}
	if took < budget {
		t.Errorf("gave up after %s, before the budget of %s ran out (first contact is over once the broker answered)", took, budget)
	}

	// The budget spent on answers: the last one is reported with its kind.
	s2 := brokertest.New(t)
	s2.Intercept(func(w http.ResponseWriter, _ *http.Request) bool {
		brokertest.ErrorBody(w, http.StatusBadRequest, "bad_request", "cannot declare queue 'q' in vhost '/' because the metadata store operation timed out")
		return true
	})
	err = fakeClient(t, Config{Endpoint: s2.URL, Username: "u", Password: "p", RetryBudget: 50 * time.Millisecond, timing: fastTiming}).DeclareQueue(context.Background(), "/", "q", nil)
	if !errors.Is(err, ErrUnavailable) || errOf(err).Cause != CauseMetadataStore {
		t.Fatalf("got %v, want ErrUnavailable about the cluster's metadata store", err)
	}
}

func TestRetryHonoursCancellation(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.Intercept(func(w http.ResponseWriter, _ *http.Request) bool {
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	})
	c := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: time.Hour})
	var attempts atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	c.transport.onAttempt = func(*http.Request) {
		if attempts.Add(1) == 3 {
			cancel() // Ctrl-C while the broker keeps failing
		}
	}
	_, err := c.GetVhost(ctx, "/")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the cancellation", err)
	}
	if got := attempts.Load(); got != 3 {
		t.Errorf("%d attempts, want none after the cancellation", got)
	}
}

// A pause is drawn from half its ceiling to the ceiling itself, both ends
// included (an odd ceiling rounded down to whole nanoseconds), down to a
// ceiling of a nanosecond: a pause of 0.
func TestBackoff_endsIncluded(t *testing.T) {
	t.Parallel()
	for _, ceiling := range []time.Duration{1, 4, 8} {
		tm := timing{backoffFirst: ceiling, backoffMax: ceiling}
		seen := map[time.Duration]bool{}
		for range 300 {
			d := tm.backoff(1)
			if d < ceiling/2 || d > ceiling {
				t.Fatalf("ceiling %d ns: pause %d ns", ceiling, d)
			}
			seen[d] = true
		}
		if lo, hi := ceiling/2, ceiling/2*2; !seen[lo] || !seen[hi] {
			t.Errorf("ceiling %d ns: pauses %v, want both %d and %d among 300 draws", ceiling, seen, lo, hi)
		}
	}
}

// A pause of 0 (a ceiling of a nanosecond) is a retry at once, not the end of
// the budget: a broker that fails twice and then answers is read.
func TestRetry_zeroPauseRetries(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.Script(brokertest.Path("vhosts/%2F"), brokertest.Reply(http.StatusServiceUnavailable, ""), brokertest.Reply(http.StatusServiceUnavailable, ""))
	tm := fastTiming
	tm.backoffFirst, tm.backoffMax = time.Nanosecond, time.Nanosecond
	c := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: time.Second, timing: tm})
	var attempts atomic.Int64
	c.transport.onAttempt = func(*http.Request) { attempts.Add(1) }
	if _, err := c.GetVhost(context.Background(), "/"); err != nil {
		t.Fatalf("got %v after %d attempts, want the answer after two failures", err, attempts.Load())
	}
}

// The 404s that a vhost still starting may give: to any write, and to a GET
// of a vhost or of its queue or consumer listing; not to a GET of one queue
// (a missing queue is the usual answer there) nor to other methods or paths.
func TestVhostWide(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method, path string
		want         bool
	}{
		{http.MethodPut, "/api/queues/%2F/q", true},
		{http.MethodDelete, "/api/queues/%2F/q", true},
		{http.MethodGet, "/api/vhosts/%2F", true},
		{http.MethodGet, "/api/queues/%2F", true},
		{http.MethodGet, "/api/consumers/%2F", true},
		{http.MethodGet, "/api/queues/%2F/q", false},
		{http.MethodGet, "/api/whoami", false},
		{http.MethodGet, "/api/nodes/x", false},
		{http.MethodHead, "/api/vhosts/%2F", false},
		{http.MethodPost, "/api/queues/%2F", false},
	} {
		req, err := http.NewRequest(tc.method, "http://h:15672"+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := vhostWide(req); got != tc.want {
			t.Errorf("%s %s: vhostWide %v, want %v", tc.method, tc.path, got, tc.want)
		}
	}
}

// A 404 is "not there" at once, with the default retry budget, unless the
// client has just seen the broker fail as a restarting one does.
func TestNotFoundIsFinalWithDefaultBudget(t *testing.T) {
	fake := brokertest.New(t)
	fake.AddVhost("gone", "")
	for _, tc := range []struct {
		name string
		call func(*Client) error
	}{
		{"missing vhost", func(c *Client) error { _, err := c.GetVhost(context.Background(), "nope"); return err }},
		{"missing queue's delete", func(c *Client) error { return c.DeleteQueue(context.Background(), "/", "nope", true) }},
		{"deleted vhost's listing", func(c *Client) error {
			fake.RemoveVhost("gone")
			_, err := c.ListQueues(context.Background(), "gone", Counted, Live)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustNew(t, Config{Endpoint: fake.URL, Username: "guest", Password: "guest"}) // default limits
			start := time.Now()
			err := tc.call(c)
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("got %v, want ErrNotFound", err)
			}
			if elapsed := time.Since(start); elapsed > time.Second {
				t.Errorf("took %s, want under 1s", elapsed)
			}
		})
	}
}
