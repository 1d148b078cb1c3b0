package broker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestBackoffBounds(t *testing.T) {
	for n := 1; n <= 64; n++ {
		ceiling := backoffMax
		if n < 16 {
			ceiling = min(backoffFirst<<(n-1), backoffMax)
		}
		for range 50 {
			d := backoff(n)
			if d < ceiling/2 || d > ceiling {
				t.Fatalf("backoff(%d) = %s, want from %s to %s", n, d, ceiling/2, ceiling)
			}
		}
	}
	if got := backoff(1); got > backoffFirst {
		t.Errorf("first pause %s, want at most %s", got, backoffFirst)
	}
}

func TestMaxRequestTime(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want time.Duration
	}{
		{Config{}, 90 * time.Second},
		{Config{RequestTimeout: time.Second, RetryBudget: 2 * time.Second}, 3 * time.Second},
		{Config{RequestTimeout: time.Second, RetryBudget: -1}, time.Second},
	} {
		if got := tc.cfg.maxRequestTime(); got != tc.want {
			t.Errorf("%+v: maxRequestTime %s, want %s", tc.cfg, got, tc.want)
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
		{"certificate", get, nil, errors.New("tls: failed to verify certificate: x509: certificate signed by unknown authority"), false},
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
		{"404 get", get, answer(404, objectNotFound), nil, false},
		{"404 put vhost recovering", put, answer(404, objectNotFound), nil, true},
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

// scripted serves the given statuses and bodies in turn, then 200 with
// body ok; it counts the requests.
type scripted struct {
	n       atomic.Int64
	answers []scriptedAnswer
	ok      string
	// unguarded counts the DELETEs sent without if-empty=true.
	unguarded atomic.Int64
}

// dropConnection as a scripted status closes the connection unanswered, as a
// node whose application has stopped does.
const dropConnection = -1

type scriptedAnswer struct {
	status int
	body   string
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int(s.n.Add(1)) - 1
	if r.Method == http.MethodDelete && r.URL.Query().Get("if-empty") != "true" {
		s.unguarded.Add(1)
	}
	w.Header().Set("Content-Type", "application/json")
	if i < len(s.answers) && s.answers[i].status == dropConnection {
		if h, ok := w.(http.Hijacker); ok {
			if conn, _, err := h.Hijack(); err == nil {
				_ = conn.Close()
			}
		}
		return
	}
	if i < len(s.answers) {
		w.WriteHeader(s.answers[i].status)
		_, _ = io.WriteString(w, s.answers[i].body)
		return
	}
	_, _ = io.WriteString(w, s.ok)
}

func fastClient(t *testing.T, endpoint string, budget time.Duration) *Client {
	t.Helper()
	c, err := New(Config{Endpoint: endpoint, Username: "u", Password: "p", RequestTimeout: 5 * time.Second, RetryBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	c.transport.pause = func(int) time.Duration { return time.Millisecond }
	return c
}

func TestRetryRidesThroughTransientAnswers(t *testing.T) {
	// A vhost that names its default queue type: GetVhost then asks nothing more.
	s := &scripted{ok: `{"name":"/","default_queue_type":"classic"}`, answers: []scriptedAnswer{
		{503, ``},
		{502, ``},
		{500, `{"error":"timeout","reason":"the metadata store operation timed out"}`},
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	if _, err := fastClient(t, srv.URL, time.Minute).GetVhost(context.Background(), "/"); err != nil {
		t.Fatal(err)
	}
	if got := s.n.Load(); got != 4 {
		t.Errorf("%d requests, want 4", got)
	}
}

func TestRetryDeclareOnRestartingNode(t *testing.T) {
	s := &scripted{answers: []scriptedAnswer{
		{404, `{"error":"Object Not Found","reason":"process is stopped by supervisor"}`},
		{400, `{"error":"bad_request","reason":"cannot declare queue 'q' because the metadata store operation timed out"}`},
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	if err := fastClient(t, srv.URL, time.Minute).DeclareQueue(context.Background(), "/", "q", nil); err != nil {
		t.Fatal(err)
	}
	if got := s.n.Load(); got != 3 {
		t.Errorf("%d requests, want 3", got)
	}
}

func TestNoRetryOfRefusals(t *testing.T) {
	for _, a := range []struct {
		status int
		body   string
		kind   error
	}{
		{401, `{"error":"not_authorized","reason":"Login failed"}`, ErrUnauthorized},
		{403, `{"error":"forbidden","reason":"Access refused."}`, ErrUnauthorized},
		{400, `{"error":"bad_request","reason":"PRECONDITION_FAILED - inequivalent arg 'x-max-priority'"}`, ErrArgumentsConflict},
	} {
		s := &scripted{answers: []scriptedAnswer{{a.status, a.body}}}
		srv := httptest.NewServer(s)
		err := fastClient(t, srv.URL, time.Minute).DeclareQueue(context.Background(), "/", "q", nil)
		srv.Close()
		if !errors.Is(err, a.kind) {
			t.Errorf("HTTP %d: got %v, want %v", a.status, err, a.kind)
		}
		if got := s.n.Load(); got != 1 {
			t.Errorf("HTTP %d was sent %d times: a refusal must not be retried", a.status, got)
		}
	}
}

func TestRetryBudgetRunsOut(t *testing.T) {
	// A port nobody listens on: every connection is refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + l.Addr().String()
	_ = l.Close()
	const budget = 100 * time.Millisecond
	c := fastClient(t, endpoint, budget)
	var attempts atomic.Int64
	c.observeAttempts(func(*http.Request) { attempts.Add(1) })
	start := time.Now()
	_, err = c.GetVhost(context.Background(), "/")
	took := time.Since(start)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "no usable answer within retry_budget 100ms") ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("got %v, want an unreachable error naming the budget and the cause", err)
	}
	if attempts.Load() < 2 {
		t.Errorf("%d attempts, want the request tried again within the budget", attempts.Load())
	}
	if took < budget {
		t.Errorf("gave up after %s, before the budget of %s ran out", took, budget)
	}

	// The budget spent on answers: the last one is reported with its kind.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"bad_request","reason":"cannot declare queue 'q' in vhost '/' because the metadata store operation timed out"}`)
	}))
	defer srv.Close()
	err = fastClient(t, srv.URL, budget).DeclareQueue(context.Background(), "/", "q", nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "majority") {
		t.Fatalf("got %v, want ErrUnavailable about the cluster's majority", err)
	}
}

func TestRetryHonoursCancellation(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c, err := New(Config{Endpoint: srv.URL, Username: "u", Password: "p", RetryBudget: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var attempts atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	c.observeAttempts(func(*http.Request) {
		if attempts.Add(1) == 3 {
			cancel() // Ctrl-C while the broker keeps failing
		}
	})
	_, err = c.GetVhost(ctx, "/")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the cancellation", err)
	}
	if got := attempts.Load(); got != 3 {
		t.Errorf("%d attempts, want none after the cancellation", got)
	}
}

// A declaration that gets no answer in time, from a cluster that reports most
// of its nodes down, is a cluster without a majority.
func TestWriteTimeoutWithoutMajority(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/api/nodes" {
			_, _ = io.WriteString(w, `[{"name":"a@h","running":true},{"name":"b@h","running":false},{"name":"c@h","running":false}]`)
			return
		}
		<-release // the metadata store never answers in time
	}))
	defer srv.Close()
	defer close(release)
	c, err := New(Config{Endpoint: srv.URL, Username: "u", Password: "p", RequestTimeout: 50 * time.Millisecond, RetryBudget: -1})
	if err != nil {
		t.Fatal(err)
	}
	err = c.DeclareQueue(context.Background(), "/", "q", nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "2 of the cluster's 3 nodes are not running (b@h, c@h)") {
		t.Fatalf("got %v, want ErrUnavailable naming the nodes down", err)
	}
}

// A 404 to a write, after the broker was seen restarting (here a 503), may
// come from a node still recovering its vhosts: it is tried again, within
// recoveryWindow only; a 404 to a GET of one queue is the usual answer for a
// queue that does not exist, and final. (Without a restart seen, a 404 is
// repeated once, then final: TestRetryStoppingAndStartingNode,
// TestNotFoundIsFinalWithDefaultBudget.)
func TestRetryNotFoundWithinRecoveryWindow(t *testing.T) {
	defer func(w time.Duration) { recoveryWindow = w }(recoveryWindow)
	recoveryWindow = 50 * time.Millisecond
	var n atomic.Int64
	var restarted atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		if !restarted.Swap(true) {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, objectNotFound)
	}))
	defer srv.Close()
	c := fastClient(t, srv.URL, time.Minute)
	start := time.Now()
	if err := c.DeclareQueue(context.Background(), "/", "q", nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	if n.Load() < 3 || time.Since(start) < recoveryWindow {
		t.Errorf("%d attempts in %s, want attempts for the recovery window of %s", n.Load(), time.Since(start), recoveryWindow)
	}
	// Well past one recovery window after the 503, but within restartMemory:
	// a node that answers again can still be recovering its vhosts.
	time.Sleep(3 * recoveryWindow)
	n.Store(0)
	if err := c.DeleteQueue(context.Background(), "/", "q", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	if n.Load() < 3 {
		t.Errorf("a DELETE answered 404 %s after the restart was sent %d times, want retries within restartMemory", 3*recoveryWindow, n.Load())
	}
	n.Store(0)
	if _, err := c.GetQueueDeclaration(context.Background(), "/", "q"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	if n.Load() != 1 {
		t.Errorf("a GET of one queue answered 404 was sent %d times, want 1", n.Load())
	}
}
