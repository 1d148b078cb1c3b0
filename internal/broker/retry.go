package broker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// Retries.
//
// A request is tried again after a transient failure: one a restarting
// broker or node gives for a few seconds and then stops giving. Those are
// connection errors (refused, reset, closed, an attempt that got no answer
// within request_timeout), 500, 502, 503 and 504, the broker's "metadata
// store operation timed out" (a cluster without quorum, or one still
// forming), a 404 to a declaration whose reason says the queue's process
// is down (its node is restarting), and the 404s and "not empty" refusals a
// node gives for a moment while it stops or starts (see next).
// Credentials, permissions and every other refusal are final, and so is a
// certificate the TLS handshake refused.
//
// Pauses start at Timing.BackoffFirst and double up to Timing.BackoffMax,
// each drawn at random from its upper half so that clients restarted
// together do not retry in step. No attempt starts later than the retry
// budget after the first one began, and the last pause is shortened to end
// at the budget, so a request ends within budget + request_timeout.
//
// First contact: until the broker has answered this client once, a refused
// connection or a host that does not resolve is most likely a wrong endpoint
// or a broker that is not running, not a restart: it is tried again within
// Timing.FirstContact only (when that is shorter than the budget), and then
// reported as a *FirstContactError naming host:port. Once the broker has
// answered, the same failures are a restart, retried within the budget; so
// are they when a contact note says that the broker answered another provider
// process at this endpoint within Timing.ContactMemory (see contact.go).

// bodyPeek is the most of an answer that is read beside decoding it: to
// classify an error answer or take its reason, or to drain a body so that
// its connection is kept.
const bodyPeek = 64 << 10

// backoff returns the pause before retry number n (1-based): at first from
// half of BackoffFirst to BackoffFirst, the ceiling doubling with each
// retry, never more than BackoffMax.
func (tm Timing) backoff(n int) time.Duration {
	d := tm.BackoffFirst
	for i := 1; i < n && d < tm.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, tm.BackoffMax)
	return d/2 + rand.N(d/2+1) //nolint:gosec // jitter needs no cryptographic randomness
}

// retryTransport gives every attempt its own timeout and tries a request
// again after transient failures within the retry budget.
type retryTransport struct {
	base    http.RoundTripper
	timeout time.Duration
	budget  time.Duration
	tm      Timing // with defaults filled in
	// onAttempt, when set, observes every attempt (unit tests).
	onAttempt func(*http.Request)
	// now and pause are the clock the rules above are decided by: the real
	// one, or a unit test's, which sets the time each decision is made at.
	now   func() time.Time
	pause func(ctx context.Context, d time.Duration) error
	// troubleAt is when (Unix nanoseconds) an attempt last failed in a way
	// a restarting broker fails (see restartSeen); 0 for never.
	troubleAt atomic.Int64
	// answered is set once any attempt got an HTTP answer (see first
	// contact above).
	answered atomic.Bool
	// note is this endpoint's contact note; notedAt is when (Unix
	// nanoseconds) this transport last wrote it, 0 for never.
	note    contactNote
	notedAt atomic.Int64
}

func newRetryTransport(base http.RoundTripper, cfg Config) *retryTransport {
	return &retryTransport{base: base, timeout: cfg.RequestTimeout, budget: cfg.retryBudget(), tm: cfg.Timing.withDefaults(),
		note: newContactNote(cfg.ContactNotes, cfg.Endpoint), now: time.Now, pause: sleepContext}
}

// sleepContext waits d, or until ctx ends (then its error).
func sleepContext(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// restartSeen reports whether an attempt failed as a restarting broker makes
// it fail (a refused or reset connection, no answer, a 5xx, a metadata store
// timeout) within the last RestartMemory. Only then are the 404s and "not
// empty" refusals of a node that is starting worth trying again (see next).
func (t *retryTransport) restartSeen() bool {
	at := t.troubleAt.Load()
	return at != 0 && t.now().Sub(time.Unix(0, at)) < t.tm.RestartMemory
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	start := t.now()
	deadline := start.Add(t.budget)
	var nf notFoundClock
	for n := 1; ; n++ {
		resp, err := t.attempt(req)
		f := transient(req, resp, err)
		if f.why == "" || ctx.Err() != nil {
			return resp, err
		}
		wait, final := t.next(f.kind, t.tm.backoff(n), &nf)
		if final {
			return resp, nil // a 404 or a refusal that means what it says
		}
		end := deadline
		firstContact := f.kind == noContact && !t.answered.Load() && !t.note.recent(t.tm.ContactMemory)
		if firstContact && t.tm.FirstContact < t.budget {
			end = start.Add(t.tm.FirstContact)
		}
		if wait = min(wait, end.Sub(t.now())); wait < 0 {
			// Out of time: the last answer, or why there was none.
			switch {
			case resp != nil:
				return resp, nil
			case firstContact:
				return nil, &FirstContactError{Addr: hostPort(req.URL), Attempts: n, Waited: t.now().Sub(start), Err: err}
			}
			return nil, &budgetError{attempts: n, budget: t.budget, timeout: t.timeout, last: err}
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, bodyPeek))
			_ = resp.Body.Close()
		}
		tflog.Warn(ctx, "management API request failed, trying again", map[string]any{
			"method": req.Method, "path": req.URL.Path, "attempt": n, "cause": f.why, "pause": wait.String(),
		})
		if err := t.pause(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// notFoundClock follows one request's answers that may come from a node
// stopping or starting (see recovering and stillStarting).
type notFoundClock struct {
	first    time.Time // the first such answer after a restart was seen
	repeated bool      // a 404 was repeated once to confirm it
}

// next decides what follows a failed attempt of the given kind: the pause
// before the next one, or final when the answer is to be taken as it is.
//
// A 404 or a "not empty" that a stopping or starting node may give is tried
// again for RecoveryWindow from the request's first such answer after this
// client has seen a restart (restartSeen), the last pause shortened to end
// with the window. (The 404 of a node that begins to stop does not start the
// window when it is the first sign of the restart; it does when an earlier
// restart is still remembered, and then a request that waits out a new
// outage longer than the window meets it closed.) Otherwise a "not empty" is
// final at once, and a 404 is repeated once after ConfirmPause: a node whose
// application is stopping answers 404 to writes on connections already open
// for a few milliseconds before it closes them (3.10 and 4.3 alike, queues
// still there), and the repeat then meets the closed port, a restart.
func (t *retryTransport) next(kind failureKind, pause time.Duration, nf *notFoundClock) (time.Duration, bool) {
	if kind == restarting || kind == noContact {
		t.troubleAt.Store(t.now().UnixNano())
		return pause, false
	}
	switch {
	case t.restartSeen():
		if nf.first.IsZero() {
			nf.first = t.now()
		}
		left := t.tm.RecoveryWindow - t.now().Sub(nf.first)
		return min(pause, left), left <= 0
	case kind == maybeNotFound && !nf.repeated:
		nf.repeated = true
		return t.tm.ConfirmPause, false
	}
	return 0, true
}

// failure says why a failed attempt is worth repeating (why, for the log),
// or why == "" when it is not: it succeeded, or its failure is final.
type failure struct {
	why  string
	kind failureKind
}

// failureKind tells next how to treat a failure worth repeating.
type failureKind int

const (
	// restarting: what a restarting broker gives (a refused or reset
	// connection, no answer, a 5xx, a metadata store timeout, a queue
	// process down); it also marks a restart as seen.
	restarting failureKind = iota
	// noContact: a refused connection or a host that does not resolve;
	// a restart once the broker has answered, else see first contact.
	noContact
	// maybeNotFound: a 404 that may come from a stopping or recovering node
	// (see recovering).
	maybeNotFound
	// maybeStarting: a guarded delete refused as "not empty" by a node that
	// may still be starting (see stillStarting).
	maybeStarting
)

// transient classifies a failed attempt (see failure). It may read an error
// answer's body and put it back.
func transient(req *http.Request, resp *http.Response, err error) failure {
	if err != nil {
		switch {
		case errors.Is(err, context.Canceled) || certificateError(err) || wrongEndpoint(err):
			return failure{}
		case dialFailed(err):
			return failure{why: err.Error(), kind: noContact}
		}
		return failure{why: err.Error()}
	}
	switch resp.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return failure{why: resp.Status}
	case http.StatusBadRequest, http.StatusNotFound, http.StatusInternalServerError:
	default:
		return failure{}
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, bodyPeek))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	reason := strings.ToLower(string(body))
	switch {
	case resp.StatusCode == http.StatusInternalServerError:
		return failure{why: resp.Status}
	case metadataStoreTimeout(reason):
		return failure{why: resp.Status + ": metadata store timed out"}
	case resp.StatusCode == http.StatusNotFound && req.Method == http.MethodPut && queueProcessDown(reason):
		return failure{why: resp.Status + ": queue process down"}
	case resp.StatusCode == http.StatusNotFound && vhostWide(req):
		return failure{why: resp.Status + recovering, kind: maybeNotFound}
	case resp.StatusCode == http.StatusBadRequest && req.Method == http.MethodDelete && strings.Contains(reason, "not empty"):
		return failure{why: resp.Status + stillStarting, kind: maybeStarting}
	}
	return failure{}
}

// recovering is the cause logged for a 404 (maybeNotFound) that a node may
// answer while its application stops (to writes, on connections already
// open) or while it recovers its vhosts after a start: "Not Found" to a
// declaration, a delete or a vhost's listing. It is also what a vhost or
// queue that is really missing gets, so it is tried again only as next says.
const recovering = ": not found (the node may be stopping or recovering its vhosts)"

// stillStarting is the cause logged for a guarded delete refused as "not
// empty" (maybeStarting): a 4.3 node answers so for an empty queue for a
// moment after it starts, before the queue's process has counted its
// messages. It is tried again only after a restart was seen, within
// Timing.RecoveryWindow (see next).
const stillStarting = ": not empty (the queue may still be starting)"

// Timing.RecoveryWindow bounds the retries of the answers above, counted
// from a request's first such answer after a restart was seen: not from its
// start, so a request that waited out a restart gets the whole window once
// the node answers again; and not from its last fault, so a real 404 between
// repeated faults still ends. (A 30 s window counted from the start was tried
// once; it did not help, since the failures it was meant for were the 404s of
// a stopping node, answered before any sign of the restart.)
//
// Timing.ConfirmPause is the pause before a 404 seen with no restart is
// repeated once. The 404s of a stopping node end within milliseconds; a
// missing queue or vhost still answers in well under a second.
//
// Timing.RestartMemory is how long after the last sign of a restart (a
// refused or reset connection, a 5xx) a 404 or a "not empty" may still come
// from a node recovering its vhosts and queues. It is the client's: after one
// 5xx, every request's 404 waits for the window during that time.

// vhostWide reports whether a 404 to req can come from a vhost that is still
// starting: a write, or a GET of a vhost or of its queue or consumer
// listing (not of one queue: a missing queue is the usual answer there).
func vhostWide(req *http.Request) bool {
	if req.Method == http.MethodPut || req.Method == http.MethodDelete {
		return true
	}
	segs := strings.Split(strings.TrimPrefix(req.URL.EscapedPath(), "/api/"), "/")
	return req.Method == http.MethodGet && len(segs) == 2 && (segs[0] == "vhosts" || segs[0] == "queues" || segs[0] == "consumers")
}

// metadataStoreTimeout reports whether a broker's reason (lower case) says
// that an operation on its metadata store timed out: a cluster that has lost
// its majority, or one still starting.
func metadataStoreTimeout(reason string) bool {
	return strings.Contains(reason, "timed out") && (strings.Contains(reason, "metadata store") || strings.Contains(reason, "khepri")) ||
		strings.Contains(reason, "timeout_waiting_for_tables")
}

// queueProcessDown reports whether a broker's reason (lower case) says that
// the process of a queue is not running: its node is down or restarting.
func queueProcessDown(reason string) bool {
	return strings.Contains(reason, "stopped by supervisor") || strings.Contains(reason, "noproc") ||
		strings.Contains(reason, "nodedown")
}

func (t *retryTransport) attempt(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	r := req.Clone(ctx)
	if req.Body != nil && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			cancel()
			return nil, err
		}
		r.Body = body
	}
	if t.onAttempt != nil {
		t.onAttempt(r)
	}
	resp, err := t.base.RoundTrip(r)
	if resp != nil {
		t.answered.Store(true)
		t.noteAnswer()
	}
	if err != nil {
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && req.Context().Err() == nil {
			return nil, &noAnswerError{timeout: t.timeout}
		}
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// budgetError says that no attempt got an answer within the retry budget.
type budgetError struct {
	attempts int
	budget   time.Duration
	timeout  time.Duration
	last     error
}

func (e *budgetError) Error() string {
	return fmt.Sprintf("no usable answer within retry_budget %s (%d attempts, request_timeout %s each): %v",
		e.budget, e.attempts, e.timeout, e.last)
}

func (e *budgetError) Unwrap() error { return e.last }

// noAnswerError is an attempt that got no answer within request_timeout.
type noAnswerError struct{ timeout time.Duration }

func (e *noAnswerError) Error() string {
	return fmt.Sprintf("no answer within request_timeout %s", e.timeout)
}

// noteAnswer writes the contact note after an answer: at the first, then at
// most every contactRefresh.
func (t *retryTransport) noteAnswer() {
	now := time.Now().UnixNano()
	last := t.notedAt.Load()
	if (last == 0 || now-last >= int64(contactRefresh)) && t.notedAt.CompareAndSwap(last, now) {
		t.note.write()
	}
}
