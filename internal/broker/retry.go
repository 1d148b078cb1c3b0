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

	"github.com/queuey/terraform-provider-queuey/internal/tlscause"
)

// Retries. A request is tried again after a transient failure, one a restarting broker or node
// gives for a few seconds: connection errors, no answer within the request timeout, 500/502/503/504, a
// metadata store timeout, a 404 saying the queue's process is down, and the 404s and "not empty"
// refusals of a node that stops or starts (see next). Every other refusal, and a refused
// certificate, is final. Pauses double from timing.backoffFirst up to backoffMax, drawn from their
// upper half so that clients do not retry in step; no attempt starts after the budget, so a request
// ends within the budget plus one request timeout. Until the broker has answered once (here, or per a
// contact note, contact.go), a refused connection or an unresolved host is tried within
// timing.firstContact only, then reported as a *firstContactError: most likely a wrong endpoint,
// not a restart.

// bodyPeek is the most of an answer read beside decoding it.
const bodyPeek = 64 << 10

// backoff returns the pause before retry n (1-based), its ceiling doubling up to backoffMax.
func (tm timing) backoff(n int) time.Duration {
	d := tm.backoffFirst
	for i := 1; i < n && d < tm.backoffMax; i++ {
		d *= 2
	}
	d = min(d, tm.backoffMax)
	return d/2 + rand.N(d/2+1) //nolint:gosec // jitter needs no cryptographic randomness
}

// retryTransport gives every attempt its own timeout and retries transient failures.
type retryTransport struct {
	base      http.RoundTripper
	timeout   time.Duration
	budget    time.Duration
	tm        timing // with defaults filled in
	onAttempt func(*http.Request)
	// now and pause are the clock the rules are decided by (a unit test's sets it).
	now   func() time.Time
	pause func(ctx context.Context, d time.Duration) error
	// troubleAt is when (Unix ns) an attempt last failed as a restarting broker fails; 0 for never.
	troubleAt atomic.Int64
	answered  atomic.Bool
	// note is this endpoint's contact note; notedAt when (Unix ns) this transport last wrote it.
	note    contactNote
	notedAt atomic.Int64
}

func newRetryTransport(base http.RoundTripper, cfg Config) *retryTransport {
	return &retryTransport{base: base, timeout: cfg.RequestTimeout, budget: cfg.retryBudget(), tm: cfg.timing.withDefaults(),
		note: newContactNote(cfg.ContactNotes, cfg.Endpoint), now: time.Now, pause: sleepContext}
}

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

// restartSeen reports a restarting broker's failure within restartMemory (see next).
func (t *retryTransport) restartSeen() bool {
	at := t.troubleAt.Load()
	return at != 0 && t.now().Sub(time.Unix(0, at)) < t.tm.restartMemory
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
		firstContact := f.kind == noContact && !t.answered.Load() && !t.note.recent(t.tm.contactMemory)
		if firstContact && t.tm.firstContact < t.budget {
			end = start.Add(t.tm.firstContact)
		}
		if wait = min(wait, end.Sub(t.now())); wait < 0 {
			// Out of time: the last answer, or why there was none.
			if resp != nil {
				return resp, nil
			}
			if firstContact {
				return nil, &firstContactError{Addr: hostPort(req.URL), Attempts: n, Waited: t.now().Sub(start), Err: err}
			}
			return nil, &BudgetError{Attempts: n, Budget: t.budget, Timeout: t.timeout, Last: err}
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

// notFoundClock follows one request's answers that may come from a node stopping or starting.
type notFoundClock struct {
	first    time.Time // the first such answer after a restart was seen
	repeated bool      // a 404 was repeated once to confirm it
}

// next decides what follows a failed attempt: the pause before the next one, or final. A 404 or
// "not empty" that a stopping or starting node may give is retried for recoveryWindow from the
// request's first such answer after a restart was seen. Otherwise "not empty" is final, and a 404
// is repeated once after confirmPause: a stopping node answers 404 on open connections for a few
// milliseconds before closing them, and the repeat meets the closed port.
func (t *retryTransport) next(kind failureKind, pause time.Duration, nf *notFoundClock) (time.Duration, bool) {
	if kind == restarting || kind == noContact {
		t.troubleAt.Store(t.now().UnixNano())
		return pause, false
	}
	if t.restartSeen() {
		if nf.first.IsZero() {
			nf.first = t.now()
		}
		left := t.tm.recoveryWindow - t.now().Sub(nf.first)
		return min(pause, left), left <= 0
	}
	if kind == maybeNotFound && !nf.repeated {
		nf.repeated = true
		return t.tm.confirmPause, false
	}
	return 0, true
}

// failure says why a failed attempt is worth repeating, or why == "" when it is not.
type failure struct {
	why  string
	kind failureKind
}

type failureKind int

const (
	// restarting: what a restarting broker gives; it also marks a restart as seen.
	restarting failureKind = iota
	// noContact: a refused connection or an unresolved host (see first contact).
	noContact
	// maybeNotFound: a 404 that may come from a stopping or recovering node.
	maybeNotFound
	// maybeStarting: a guarded delete refused as "not empty" by a node that may be starting.
	maybeStarting
)

// transient classifies a failed attempt; it may read an error answer's body and put it back.
func transient(req *http.Request, resp *http.Response, err error) failure {
	if err != nil {
		switch {
		case errors.Is(err, context.Canceled) || tlscause.CertificateRefused(err) || wrongEndpoint(err):
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
	if resp.StatusCode == http.StatusInternalServerError {
		return failure{why: resp.Status}
	}
	if metadataStoreTimeout(reason) {
		return failure{why: resp.Status + ": metadata store timed out"}
	}
	if resp.StatusCode == http.StatusNotFound && req.Method == http.MethodPut && queueProcessDown(reason) {
		return failure{why: resp.Status + ": queue process down"}
	}
	if resp.StatusCode == http.StatusNotFound && vhostWide(req) {
		return failure{why: resp.Status + recovering, kind: maybeNotFound}
	}
	if resp.StatusCode == http.StatusBadRequest && req.Method == http.MethodDelete && strings.Contains(reason, "not empty") {
		return failure{why: resp.Status + stillStarting, kind: maybeStarting}
	}
	return failure{}
}

// recovering is logged for a 404 a stopping or recovering node may answer (see next).
const recovering = ": not found (the node may be stopping or recovering its vhosts)"

// stillStarting is logged for 4.3's "not empty" to an empty queue just after it starts.
const stillStarting = ": not empty (the queue may still be starting)"

// timing.recoveryWindow is counted from a request's first such answer after a restart was seen, so
// a request that waited out a restart gets the whole window, and a real 404 still ends.
// timing.confirmPause: a stopping node's 404s end within milliseconds. timing.restartMemory: how
// long after the last sign of a restart a 404 or "not empty" may still come from a recovering node.

// vhostWide reports whether a 404 to req can come from a starting vhost.
func vhostWide(req *http.Request) bool {
	if req.Method == http.MethodPut || req.Method == http.MethodDelete {
		return true
	}
	segs := strings.Split(strings.TrimPrefix(req.URL.EscapedPath(), "/api/"), "/")
	return req.Method == http.MethodGet && len(segs) == 2 && (segs[0] == "vhosts" || segs[0] == "queues" || segs[0] == "consumers")
}

// metadataStoreTimeout reports whether a reason says a metadata store operation timed out.
func metadataStoreTimeout(reason string) bool {
	return strings.Contains(reason, "timed out") && (strings.Contains(reason, "metadata store") || strings.Contains(reason, "khepri")) ||
		strings.Contains(reason, "timeout_waiting_for_tables")
}

// queueProcessDown reports whether a reason (lower case) says a queue's process is not running.
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
			return nil, &NoAnswerError{Timeout: t.timeout}
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

// BudgetError is a request that got no usable answer within its retry budget.
type BudgetError struct {
	// Attempts were made, each bounded by Timeout, within Budget.
	Attempts int
	Budget   time.Duration
	Timeout  time.Duration
	// Last is the last attempt's failure.
	Last error
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("no usable answer within the retry budget of %s (%d attempts, each up to %s): %v",
		e.Budget, e.Attempts, e.Timeout, e.Last)
}

func (e *BudgetError) Unwrap() error { return e.Last }

// NoAnswerError is an attempt that got no answer within its Timeout.
type NoAnswerError struct{ Timeout time.Duration }

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("no answer within %s", e.Timeout)
}

// noteAnswer writes the contact note at the first answer, then at most every contactRefresh.
func (t *retryTransport) noteAnswer() {
	now := time.Now().UnixNano()
	last := t.notedAt.Load()
	if (last == 0 || now-last >= int64(contactRefresh)) && t.notedAt.CompareAndSwap(last, now) {
		t.note.write()
	}
}
