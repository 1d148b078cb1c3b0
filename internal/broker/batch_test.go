package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeBroker is a management API with one vhost, "v". Each listing answers
// with the queues as they were when the request arrived, plus a queue named
// "seq-<n>" where n numbers the listing requests, so that a caller can tell
// which request answered it.
type fakeBroker struct {
	t   *testing.T
	srv *httptest.Server

	mu     sync.Mutex
	queues map[string]bool
	// hold, when set, holds every listing after it has taken its snapshot
	// until the channel is closed.
	hold chan struct{}
	// started is closed (and replaced) whenever a listing request arrives.
	started chan struct{}
	// listStatus, when not 0, is the status of every listing.
	listStatus int
	// canceled counts listings whose client went away before the answer.
	canceled atomic.Int64

	listings  atomic.Int64
	consumers atomic.Int64
	vhostGets atomic.Int64
	writes    atomic.Int64
}

func newFakeBroker(t *testing.T) *fakeBroker {
	t.Helper()
	b := &fakeBroker{t: t, queues: map[string]bool{}, started: make(chan struct{})}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *fakeBroker) client(t *testing.T) *Client {
	t.Helper()
	c, err := New(Config{Endpoint: b.srv.URL, Username: "u", Password: "p", RequestTimeout: 5 * time.Second, RetryBudget: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (b *fakeBroker) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	switch {
	case r.Method == http.MethodGet && path == "/api/queues/v":
		n := b.listings.Add(1)
		b.mu.Lock()
		names := []string{fmt.Sprintf("seq-%d", n)}
		for q := range b.queues {
			names = append(names, q)
		}
		hold, status := b.hold, b.listStatus
		close(b.started)
		b.started = make(chan struct{})
		b.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				b.canceled.Add(1)
				return
			}
		}
		if status != 0 {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"error":"Object Not Found","reason":"Not Found"}`))
			return
		}
		out := make([]map[string]any, 0, len(names))
		for _, q := range names {
			out = append(out, map[string]any{"name": q, "vhost": "v", "type": "classic", "durable": true,
				"auto_delete": false, "exclusive": false, "arguments": map[string]any{}, "messages": 0})
		}
		_ = json.NewEncoder(w).Encode(out)
	case r.Method == http.MethodGet && path == "/api/consumers/v":
		b.consumers.Add(1)
		_, _ = w.Write([]byte(`[{"queue":{"name":"busy"}},{"queue":{"name":"busy"}}]`))
	case r.Method == http.MethodGet && path == "/api/vhosts/v":
		b.vhostGets.Add(1)
		_, _ = w.Write([]byte(`{"name":"v","default_queue_type":"undefined"}`))
	case r.Method == http.MethodPut && strings.HasPrefix(path, "/api/queues/v/"):
		b.writes.Add(1)
		b.mu.Lock()
		b.queues[strings.TrimPrefix(path, "/api/queues/v/")] = true
		b.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	default:
		http.NotFound(w, r)
	}
}

// nextStart returns a channel closed when the next listing request arrives.
func (b *fakeBroker) nextStart() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.started
}

func (b *fakeBroker) setHold(ch chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hold = ch
}

// seqOf returns the number of the listing request that produced an answer.
func seqOf(t *testing.T, qs map[string]Queue) int64 {
	t.Helper()
	for name := range qs {
		var n int64
		if _, err := fmt.Sscanf(name, "seq-%d", &n); err == nil {
			return n
		}
	}
	t.Fatalf("answer carries no sequence number: %v", qs)
	return 0
}

// setWindows shortens or lengthens the gathering windows for one test.
func setWindows(t *testing.T, gap, gapMax, maxWait time.Duration) {
	t.Helper()
	oldGap, oldGapMax, oldMax := gatherGap, gatherGapMax, gatherMax
	gatherGap, gatherGapMax, gatherMax = gap, gapMax, maxWait
	t.Cleanup(func() { gatherGap, gatherGapMax, gatherMax = oldGap, oldGapMax, oldMax })
}

func TestBatch_concurrentCallersShareOneRequest(t *testing.T) {
	setWindows(t, 100*time.Millisecond, 100*time.Millisecond, 5*time.Second)
	b := newFakeBroker(t)
	c := b.client(t)

	const callers = 10
	var wg sync.WaitGroup
	seqs := make([]int64, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var qs map[string]Queue
			if i%2 == 0 {
				qs, errs[i] = c.ListQueues(context.Background(), "v")
			} else {
				qs, errs[i] = c.ListQueueDeclarations(context.Background(), "v")
			}
			if errs[i] == nil {
				seqs[i] = seqOf(t, qs)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	if n := b.listings.Load(); n != 1 {
		t.Fatalf("%d concurrent callers sent %d listing requests, want 1", callers, n)
	}
	for i, s := range seqs {
		if s != 1 {
			t.Errorf("caller %d got the answer of request %d, want 1", i, s)
		}
	}
	// Nothing is kept: the next call asks again.
	qs, err := c.ListQueues(context.Background(), "v")
	if err != nil {
		t.Fatal(err)
	}
	if s := seqOf(t, qs); s != 2 || b.listings.Load() != 2 {
		t.Fatalf("a later call got the answer of request %d after %d requests, want a new request 2", s, b.listings.Load())
	}
}

func TestBatch_callerAfterWriteNeverGetsAnOlderAnswer(t *testing.T) {
	setWindows(t, time.Millisecond, time.Millisecond, 200*time.Millisecond)
	b := newFakeBroker(t)
	c := b.client(t)
	ctx := context.Background()

	// A's listing is sent and held by the broker, its snapshot taken.
	hold := make(chan struct{})
	b.setHold(hold)
	started := b.nextStart()
	type result struct {
		qs  map[string]Queue
		err error
	}
	aDone := make(chan result, 1)
	go func() {
		qs, err := c.ListQueues(ctx, "v")
		aDone <- result{qs, err}
	}()
	<-started

	// A write completes while that listing is in flight.
	if err := c.DeclareQueue(ctx, "v", "new", nil); err != nil {
		t.Fatal(err)
	}
	// B asks after the write: it must not share A's request.
	b.setHold(nil)
	before := b.listings.Load()
	qs, err := c.ListQueueDeclarations(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	if s := seqOf(t, qs); s <= before {
		t.Fatalf("B, asking after a write, got the answer of request %d, which started before it (%d had started)", s, before)
	}
	if _, ok := qs["new"]; !ok {
		t.Fatalf("B does not see the queue written before it asked: %v", qs)
	}

	close(hold)
	a := <-aDone
	if a.err != nil {
		t.Fatal(a.err)
	}
	if s := seqOf(t, a.qs); s != 1 {
		t.Fatalf("A got the answer of request %d, want 1", s)
	}
}

// Every answer comes from a request that arrived at the broker after the
// caller asked, however the calls interleave with each other and with writes.
func TestBatch_answersNeverPredateTheCall(t *testing.T) {
	setWindows(t, 2*time.Millisecond, 5*time.Millisecond, time.Second)
	b := newFakeBroker(t)
	c := b.client(t)
	ctx := context.Background()

	var wg sync.WaitGroup
	var failures atomic.Int64
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				if (i+j)%7 == 0 {
					if err := c.DeclareQueue(ctx, "v", fmt.Sprintf("q%d-%d", i, j), nil); err != nil {
						t.Error(err)
					}
					continue
				}
				asked := b.listings.Load()
				qs, err := c.ListQueues(ctx, "v")
				if err != nil {
					t.Error(err)
					return
				}
				if s := seqOf(t, qs); s <= asked {
					failures.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d answers came from requests that had started before the call", n)
	}
	t.Logf("%d listing requests served the concurrent calls", b.listings.Load())
}

func TestBatch_errorsAreSharedAndNotKept(t *testing.T) {
	setWindows(t, 100*time.Millisecond, 100*time.Millisecond, 5*time.Second)
	b := newFakeBroker(t)
	b.listStatus = http.StatusNotFound
	c := b.client(t)

	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.ListQueues(context.Background(), "v")
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("caller %d: got %v, want an error wrapping ErrNotFound", i, err)
		}
	}
	if n := b.listings.Load(); n != 1 {
		t.Fatalf("the failing listing was sent %d times, want once for all callers", n)
	}
	// The failure is not remembered: the next call asks again and succeeds.
	b.mu.Lock()
	b.listStatus = 0
	b.mu.Unlock()
	if _, err := c.ListQueues(context.Background(), "v"); err != nil {
		t.Fatalf("after the broker recovered: %v", err)
	}
	if n := b.listings.Load(); n != 2 {
		t.Fatalf("%d listing requests, want 2", n)
	}
}

func TestBatch_cancelOneCallerOnly(t *testing.T) {
	setWindows(t, 200*time.Millisecond, 200*time.Millisecond, 5*time.Second)
	b := newFakeBroker(t)
	c := b.client(t)
	hold := make(chan struct{})
	b.setHold(hold)
	started := b.nextStart()

	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	type result struct {
		qs  map[string]Queue
		err error
	}
	results := make([]chan result, 3)
	for i := range results {
		results[i] = make(chan result, 1)
		ctx := context.Background()
		if i == 0 {
			ctx = ctx1
		}
		go func() {
			qs, err := c.ListQueues(ctx, "v")
			results[i] <- result{qs, err}
		}()
	}
	<-started // all three joined (the gap passed), the request is in flight
	cancel1()
	select {
	case r := <-results[0]:
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("the cancelled caller got %v, want context.Canceled", r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled caller is still waiting")
	}
	close(hold)
	for i := 1; i < 3; i++ {
		r := <-results[i]
		if r.err != nil {
			t.Fatalf("caller %d failed after another caller cancelled: %v", i, r.err)
		}
		if s := seqOf(t, r.qs); s != 1 {
			t.Fatalf("caller %d got the answer of request %d, want 1", i, s)
		}
	}
	if n, x := b.listings.Load(), b.canceled.Load(); n != 1 || x != 0 {
		t.Fatalf("%d listing requests, %d cancelled; want 1 request that completed", n, x)
	}
}

func TestBatch_requestCancelledWhenEveryCallerLeaves(t *testing.T) {
	setWindows(t, time.Millisecond, time.Millisecond, time.Second)
	b := newFakeBroker(t)
	c := b.client(t)
	hold := make(chan struct{})
	defer close(hold)
	b.setHold(hold)
	started := b.nextStart()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.ListQueues(ctx, "v")
		done <- err
	}()
	<-started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.canceled.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the request went on with nobody waiting for it")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Once the gatherer has seen how many callers come together, a batch that
// has them all goes out at once instead of waiting for the gap.
func TestBatch_fullBatchGoesWithoutWaiting(t *testing.T) {
	setWindows(t, 300*time.Millisecond, 300*time.Millisecond, 5*time.Second)
	b := newFakeBroker(t)
	c := b.client(t)
	wave := func() time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := c.ListQueueDeclarations(context.Background(), "v"); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	if d := wave(); d < 300*time.Millisecond {
		t.Fatalf("the first wave took %s; it should have waited for the gap", d)
	}
	if d := wave(); d > 250*time.Millisecond {
		t.Fatalf("the second wave of as many callers took %s; it should go as soon as all have joined", d)
	}
	if n := b.listings.Load(); n != 2 {
		t.Fatalf("%d listing requests for two waves, want 2", n)
	}
}

func TestBatch_vhostAndConsumerListsShared(t *testing.T) {
	setWindows(t, 100*time.Millisecond, 100*time.Millisecond, 5*time.Second)
	b := newFakeBroker(t)
	c := b.client(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			v, err := c.GetVhost(context.Background(), "v")
			if err != nil || !v.IsClassic() {
				t.Errorf("GetVhost: %+v, %v", v, err)
			}
		}()
		go func() {
			defer wg.Done()
			qs, err := c.ListQueuesWithConsumers(context.Background(), "v")
			if err != nil {
				t.Error(err)
				return
			}
			if q := qs[fmt.Sprintf("seq-%d", seqOf(t, qs))]; q.Consumers == nil || *q.Consumers != 0 {
				t.Errorf("consumer count of an unused queue: %v", q.Consumers)
			}
		}()
	}
	wg.Wait()
	if v, l, cs := b.vhostGets.Load(), b.listings.Load(), b.consumers.Load(); v != 1 || l != 1 || cs != 1 {
		t.Fatalf("8 concurrent callers of each sent %d vhost, %d queue and %d consumer requests; want 1 each", v, l, cs)
	}
}
