package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// newReadsBroker returns a fake broker with the vhost "v" whose listings
// carry their sequence number (see seqOf), and a client of it whose request
// timeout (a minute) outlasts every wait of these tests. The client asks the
// fake in-process, not over a connection: a listing the fake holds then waits
// on channels alone, and a test in a synctest bubble can wait until every
// caller has joined or been held (synctest.Wait). Call it before
// synctest.Test, outside the bubble: the fake's listener, started inside,
// would belong to the bubble and synctest.Wait would never return. Its retry
// transport reads a clock that moves at each reading (withClock), as a real
// one does, where a bubble's stands still: a 404 is then not confirmed
// within a retry budget of 0.
func newReadsBroker(t *testing.T) (*brokertest.Server, *Client) {
	t.Helper()
	b := brokertest.New(t)
	b.AddVhost("v", "")
	b.StampListings()
	c, _ := withClock(fakeClient(t, Config{Endpoint: b.URL, Username: "u", Password: "p", RequestTimeout: time.Minute}))
	c.transport.base = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		w := httptest.NewRecorder()
		b.Config.Handler.ServeHTTP(w, r)
		if err := r.Context().Err(); err != nil {
			return nil, err
		}
		return w.Result(), nil
	})
	return b, c
}

// seqOf returns the number of the listing request that produced an answer,
// 0 for none (a failed call). An answer merged from two listings (the checks
// before a destroy) has two sequence numbers: the highest identifies it.
func seqOf(qs map[string]Queue) (seq int64) {
	for name := range qs {
		n, _ := strconv.ParseInt(strings.TrimPrefix(name, "seq-"), 10, 64)
		seq = max(seq, n)
	}
	return seq
}

// wantListings fails the test unless the broker has answered n listings;
// format takes their number.
func wantListings(t *testing.T, b *brokertest.Server, n int64, format string) {
	t.Helper()
	if got := b.Listings("v"); got != n {
		t.Fatalf(format, got)
	}
}

// answered is the answer of one call of a listing.
type answered struct {
	qs  map[string]Queue
	err error
}

// goList calls list n times at once, each on a goroutine of its own, and
// returns the channel of their answers.
func goList(n int, list func() (map[string]Queue, error)) chan answered {
	answers := make(chan answered, n)
	for range n {
		go func() { qs, err := list(); answers <- answered{qs, err} }()
	}
	return answers
}

// holdFirst holds b's listings until release, which the test's end calls
// too, and calls list (goList); it returns once the broker holds that
// listing, and fails the test when the listing ended before it got there.
func holdFirst(t *testing.T, b *brokertest.Server, list func() (map[string]Queue, error)) (first chan answered, release func()) {
	t.Helper()
	hold := make(chan struct{})
	release = sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release)
	b.HoldListings(hold)
	first = goList(1, list)
	synctest.Wait() // the listing is held, or has ended
	if len(first) > 0 {
		t.Fatalf("the first listing ended before the broker held it: %v", (<-first).err)
	}
	return first, release
}

func TestReads_keptListingServesEveryLaterReadUntilAWrite(t *testing.T) {
	b, c := newReadsBroker(t)
	ctx := context.Background()
	list := func() (map[string]Queue, error) { return queuesOf(c, ctx, "v", Declared, Kept) }

	// Concurrent reads share one listing; later reads, with no write in
	// between, take the same.
	for _, when := range []string{"concurrent", "later"} {
		answers := goList(10, list)
		for range 10 {
			if r := <-answers; seqOf(r.qs) != 1 {
				t.Fatalf("a %s read got the answer of request %d (%v), want the kept 1", when, seqOf(r.qs), r.err)
			}
		}
	}
	wantListings(t, b, 1, "20 reads sent %d listing requests, want 1")
	// A write drops it: the next read asks again and sees the write.
	if err := c.DeclareQueue(ctx, "v", "new", nil); err != nil {
		t.Fatal(err)
	}
	qs, err := list()
	if _, ok := qs["new"]; !ok || seqOf(qs) != 2 {
		t.Fatalf("after a write, a read got request %d (%v) without the written queue: %v", seqOf(qs), err, qs)
	}
	if err := c.DeleteQueue(ctx, "v", "new", true); err != nil {
		t.Fatal(err)
	}
	if qs, err = list(); seqOf(qs) != 3 {
		t.Fatalf("after a delete, a read got request %d (%v), want a new request 3", seqOf(qs), err)
	}
}

func TestReads_liveListingIsNeverKept(t *testing.T) {
	b, c := newReadsBroker(t)
	ctx := context.Background()
	for _, list := range []func() (map[string]Queue, error){
		func() (map[string]Queue, error) { return queuesOf(c, ctx, "v", Counted, Live) },
		func() (map[string]Queue, error) { return queuesOf(c, ctx, "v", CheckedWithConsumers, Live) },
	} {
		before := b.Listings("v")
		for range 3 {
			qs, err := list()
			if s := seqOf(qs); s <= before {
				t.Fatalf("a live read got the answer of request %d (%v), which had finished before it asked (%d)", s, err, before)
			}
			before = b.Listings("v")
		}
	}
}

func TestReads_liveCallersShareARequestInFlight(t *testing.T) {
	b, c := newReadsBroker(t)
	synctest.Test(t, func(t *testing.T) {
		live := func() (map[string]Queue, error) { return queuesOf(c, context.Background(), "v", Counted, Live) }
		first, release := holdFirst(t, b, live)
		// Nine more callers while the first request is in flight join it.
		answers := goList(9, live)
		synctest.Wait() // every caller has joined (or is held on a request of its own)
		release()
		go func() { answers <- <-first }()
		for range 10 {
			if r := <-answers; seqOf(r.qs) != 1 {
				t.Fatalf("a caller got the answer of request %d (%v), want the one in flight, 1", seqOf(r.qs), r.err)
			}
		}
		wantListings(t, b, 1, "%d listing requests, want 1")
	})
}

func TestReads_callerAfterWriteNeverGetsAnOlderAnswer(t *testing.T) {
	b, c := newReadsBroker(t)
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()

		for _, kept := range []bool{false, true} {
			list := func() (map[string]Queue, error) {
				if kept {
					return queuesOf(c, ctx, "v", Declared, Kept)
				}
				return queuesOf(c, ctx, "v", Counted, Live)
			}
			// A's listing is sent and held by the broker, its snapshot taken.
			aDone, release := holdFirst(t, b, list)
			aSeq := b.Listings("v")

			// A write completes while that listing is in flight.
			name := fmt.Sprintf("new-%v", kept)
			if err := c.DeclareQueue(ctx, "v", name, nil); err != nil {
				t.Fatal(err)
			}
			// B asks after the write: it must not share A's request.
			b.HoldListings(nil)
			qs, err := list()
			if err != nil {
				t.Fatal(err)
			}
			if s := seqOf(qs); s <= aSeq {
				t.Fatalf("kept=%v: B, asking after a write, got the answer of request %d, which started before it", kept, s)
			}
			if _, ok := qs[name]; !ok {
				t.Fatalf("kept=%v: B does not see the queue written before it asked: %v", kept, qs)
			}
			release()
			if a := <-aDone; seqOf(a.qs) != aSeq {
				t.Fatalf("kept=%v: A got the answer of request %d (%v), want %d", kept, seqOf(a.qs), a.err, aSeq)
			}
			// A's answer, older than the write, is not kept either.
			if qs, err = list(); seqOf(qs) < aSeq+1 {
				t.Fatalf("kept=%v: a read after A's listing ended got request %d (%v)", kept, seqOf(qs), err)
			}
		}
	})
}

// However the calls interleave with each other and with writes, every answer
// shows the queues this client had declared before the call began.
func TestReads_answersNeverPredateTheLastWrite(t *testing.T) {
	b, c := newReadsBroker(t)
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
				var mine []string
				for k := 0; k < j; k++ {
					if (i+k)%7 == 0 {
						mine = append(mine, fmt.Sprintf("q%d-%d", i, k))
					}
				}
				var qs map[string]Queue
				var err error
				live := j%2 == 0
				if live {
					qs, err = queuesOf(c, ctx, "v", Counted, Live)
				} else {
					qs, err = queuesOf(c, ctx, "v", Declared, Kept)
				}
				if err != nil {
					t.Error(err)
					return
				}
				for _, name := range mine {
					if _, ok := qs[name]; !ok {
						failures.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d answers missed a queue this client had declared before asking", n)
	}
	t.Logf("%d listing requests served the concurrent calls", b.Listings("v"))
}

func TestReads_errorsAreSharedAndNotKept(t *testing.T) {
	b, c := newReadsBroker(t)
	synctest.Test(t, func(t *testing.T) {
		b.FailListings(http.StatusNotFound)
		list := func() (map[string]Queue, error) { return queuesOf(c, context.Background(), "v", Declared, Kept) }
		first, release := holdFirst(t, b, list)
		answers := goList(4, list)
		synctest.Wait() // every caller has joined (or is held on a request of its own)
		release()
		go func() { answers <- <-first }()
		for i := range 5 {
			if r := <-answers; !errors.Is(r.err, ErrNotFound) {
				t.Errorf("caller %d: got %v, want an error wrapping ErrNotFound", i, r.err)
			}
		}
		wantListings(t, b, 1, "the failing listing was sent %d times, want once for all callers")
		// The failure is not remembered: the next call asks again and succeeds.
		b.FailListings(0)
		b.HoldListings(nil)
		if _, err := list(); err != nil {
			t.Fatalf("after the broker recovered: %v", err)
		}
		wantListings(t, b, 2, "%d listing requests, want 2")
	})
}

func TestReads_cancelOneCallerOnly(t *testing.T) {
	b, c := newReadsBroker(t)
	synctest.Test(t, func(t *testing.T) {
		ctx1, cancel1 := context.WithCancel(context.Background())
		defer cancel1()
		first, release := holdFirst(t, b, func() (map[string]Queue, error) { return queuesOf(c, ctx1, "v", Counted, Live) })
		// The first caller's request is in flight; the others join it.
		others := goList(2, func() (map[string]Queue, error) { return queuesOf(c, context.Background(), "v", Counted, Live) })
		synctest.Wait() // every caller has joined (or is held on a request of its own)
		cancel1()
		if r := <-first; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("the cancelled caller got %v, want context.Canceled", r.err)
		}
		release()
		for range 2 {
			if r := <-others; seqOf(r.qs) != 1 {
				t.Fatalf("a caller got the answer of request %d (%v) after another caller cancelled, want 1", seqOf(r.qs), r.err)
			}
		}
		if n, x := b.Listings("v"), b.CanceledListings(); n != 1 || x != 0 {
			t.Fatalf("%d listing requests, %d cancelled; want 1 request that completed", n, x)
		}
	})
}

func TestReads_requestCancelledWhenEveryCallerLeaves(t *testing.T) {
	b, c := newReadsBroker(t)
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done, _ := holdFirst(t, b, func() (map[string]Queue, error) { return queuesOf(c, ctx, "v", Declared, Kept) })
		cancel()
		if r := <-done; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", r.err)
		}
		if synctest.Wait(); b.CanceledListings() == 0 {
			t.Fatal("the request, with nobody waiting for it, was not cancelled")
		}
		// The abandoned request is not kept: the next caller asks again.
		b.HoldListings(nil)
		if _, err := queuesOf(c, context.Background(), "v", Declared, Kept); err != nil {
			t.Fatal(err)
		}
		wantListings(t, b, 2, "%d listing requests, want 2")
	})
}

func TestReads_peekSharesTheChecksListingUntilAWrite(t *testing.T) {
	b, c := newReadsBroker(t)
	ctx := context.Background()
	for range 5 {
		qs, err := queuesOf(c, ctx, "v", CheckedWithConsumers, Kept)
		if err != nil {
			t.Fatal(err)
		}
		if q := qs["seq-1"]; q.Consumers == nil || *q.Consumers != 0 {
			t.Fatalf("consumer count of an unused queue: %v", q.Consumers)
		}
	}
	// One round: the queue listings with and without counts, and the consumers.
	if l, cs := b.Listings("v"), len(b.RequestsMatching("GET consumers v")); l != 2 || cs != 1 {
		t.Fatalf("5 peeks sent %d queue and %d consumer listings, want 2 and 1", l, cs)
	}
	// A live check never takes the kept one.
	if _, err := queuesOf(c, ctx, "v", CheckedWithConsumers, Live); err != nil {
		t.Fatal(err)
	}
	if l, cs := b.Listings("v"), len(b.RequestsMatching("GET consumers v")); l != 4 || cs != 2 {
		t.Fatalf("a live check after peeks: %d queue and %d consumer listings in all, want 4 and 2", l, cs)
	}
}

// The checks before a destroy may join a listing in flight that began before
// this client deleted a queue (a delete only takes a queue away), never one
// that began before any other write, and a kept read (the plan-time warning)
// takes nothing older than a delete.
func TestReads_checksJoinAListingInFlightAcrossQueueDeletesOnly(t *testing.T) {
	b, c := newReadsBroker(t)
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b.PutQueue("v", brokertest.Queue{Name: "gone", Messages: brokertest.Count(0)})

		check := func() (map[string]Queue, error) { return queuesOf(c, ctx, "v", CheckedWithConsumers, Live) }
		a, release := holdFirst(t, b, check) // A's 2 listings, with and without counts, are held

		// A delete while A's listings are in flight: B, asking after it, joins them.
		if err := c.DeleteQueue(ctx, "v", "gone", true); err != nil {
			t.Fatal(err)
		}
		bCh := goList(1, check)
		synctest.Wait() // B has joined (or is held on requests of its own)
		wantListings(t, b, 2, "a check after a queue delete sent listings of its own: %d in all, want 2")

		// A declaration: C, asking after it, never joins them.
		if err := c.DeclareQueue(ctx, "v", "new", nil); err != nil {
			t.Fatal(err)
		}
		cCh := goList(1, check)
		synctest.Wait() // C's listings are held
		release()
		ra, rb, rc := <-a, <-bCh, <-cCh
		for _, r := range []answered{ra, rb, rc} {
			if r.err != nil {
				t.Fatal(r.err)
			}
		}
		if s := seqOf(ra.qs); s == 0 || s != seqOf(rb.qs) || len(ra.qs) != len(rb.qs) {
			t.Fatalf("B did not get A's answer: %v vs %v", ra.qs, rb.qs)
		}
		if _, ok := rc.qs["new"]; !ok {
			t.Fatalf("C does not see the queue declared before it asked: %v", rc.qs)
		}

		// A kept read after a delete takes neither a finished answer nor one in
		// flight from before it.
		b.HoldListings(nil)
		if _, err := queuesOf(c, ctx, "v", CheckedWithConsumers, Kept); err != nil {
			t.Fatal(err)
		}
		before := b.Listings("v")
		if err := c.DeleteQueue(ctx, "v", "new", true); err != nil {
			t.Fatal(err)
		}
		qs, err := queuesOf(c, ctx, "v", CheckedWithConsumers, Kept)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := qs["new"]; ok || b.Listings("v") != before+2 {
			t.Fatalf("a peek after a delete got an older answer (%d listings before, %d after): %v", before, b.Listings("v"), qs)
		}
		if err := c.DeclareQueue(ctx, "v", "other", nil); err != nil {
			t.Fatal(err) // so that the next peek sends a listing
		}
		peek := func() (map[string]Queue, error) { return queuesOf(c, ctx, "v", CheckedWithConsumers, Kept) }
		d, release := holdFirst(t, b, peek) // D's 2 listings are held
		if err := c.DeleteQueue(ctx, "v", "other", true); err != nil {
			t.Fatal(err)
		}
		e := goList(1, peek)
		synctest.Wait() // E's listings are held
		release()
		if r := <-d; r.err != nil {
			t.Fatal(r.err)
		}
		if r := <-e; r.err != nil {
			t.Fatal(r.err)
		}
		wantListings(t, b, before+6, "a kept read after a delete joined a listing from before it: %d listings, want E's own")
	})
}

// However checks interleave with declarations and deletes, a check never
// misses a queue this client declared before it asked, and a kept read never
// shows one this client deleted before it asked.
func TestReads_checksNeverPredateTheLastDeclaration(t *testing.T) {
	b, c := newReadsBroker(t)
	ctx := context.Background()

	var wg sync.WaitGroup
	var missed, stale atomic.Int64
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 12 {
				name := fmt.Sprintf("q%d", i)
				switch j % 4 {
				case 0:
					if err := c.DeclareQueue(ctx, "v", name, nil); err != nil {
						t.Error(err)
					}
				case 1, 3:
					live := j%4 == 1
					var qs map[string]Queue
					var err error
					if live {
						qs, err = queuesOf(c, ctx, "v", CheckedWithConsumers, Live)
					} else {
						qs, err = queuesOf(c, ctx, "v", CheckedWithConsumers, Kept)
					}
					if err != nil {
						t.Error(err)
						return
					}
					_, ok := qs[name]
					if live && !ok {
						missed.Add(1)
					}
					if !live && ok {
						stale.Add(1)
					}
				case 2:
					if err := c.DeleteQueue(ctx, "v", name, true); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if n := missed.Load(); n > 0 {
		t.Fatalf("%d checks missed a queue this client had declared before asking", n)
	}
	if n := stale.Load(); n > 0 {
		t.Fatalf("%d kept reads showed a queue this client had deleted before asking", n)
	}
	t.Logf("%d listing requests served the concurrent calls", b.Listings("v"))
}

type flightResult struct {
	val int
	err error
}

// A failed request of an older generation drops only itself: the request of
// the current generation stays in flight for later callers to join.
func TestFlight_failureDropsOnlyItself(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var f flight[int]
		ctx := context.Background()
		releaseA, releaseB := make(chan struct{}), make(chan struct{})
		resA, resB, resC := make(chan flightResult, 1), make(chan flightResult, 1), make(chan flightResult, 1)
		go func() {
			v, err := f.do(ctx, "k", live, func(context.Context) (int, error) {
				<-releaseA
				return 0, errors.New("A failed")
			})
			resA <- flightResult{v, err}
		}()
		synctest.Wait() // request A is in flight
		f.wrote()       // a write: the next caller may not join A
		go func() {
			v, err := f.do(ctx, "k", live, func(context.Context) (int, error) {
				<-releaseB
				return 2, nil
			})
			resB <- flightResult{v, err}
		}()
		synctest.Wait() // request B is in flight
		close(releaseA)
		if r := <-resA; r.err == nil {
			t.Error("A's caller got no error")
		}
		calledC := make(chan struct{}, 1)
		go func() {
			v, err := f.do(ctx, "k", live, func(context.Context) (int, error) {
				calledC <- struct{}{}
				return 3, nil
			})
			resC <- flightResult{v, err}
		}()
		synctest.Wait() // C joins B before B ends
		close(releaseB)
		if r := <-resC; r.err != nil || r.val != 2 || len(calledC) != 0 {
			t.Errorf("C got %d, %v (own request: %v), want B's answer 2", r.val, r.err, len(calledC) != 0)
		}
		<-resB
	})
}

// A request whose only caller stopped waiting is cancelled and forgotten: the
// next caller starts a request of its own, never joins the abandoned one.
func TestFlight_abandonedRequestCancelled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var f flight[int]
		cancelled, finish := make(chan struct{}), make(chan struct{})
		defer close(finish)
		ctx, cancel := context.WithCancel(context.Background())
		res := make(chan flightResult, 1)
		go func() {
			v, err := f.do(ctx, "k", live, func(fctx context.Context) (int, error) {
				<-fctx.Done()
				close(cancelled)
				<-finish // still winding down when the next caller comes
				return 0, fctx.Err()
			})
			res <- flightResult{v, err}
		}()
		synctest.Wait() // the request is in flight
		cancel()
		if r := <-res; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("the cancelled caller got %v", r.err)
		}
		<-cancelled
		next, cancelNext := context.WithTimeout(context.Background(), time.Second)
		defer cancelNext()
		v, err := f.do(next, "k", live, func(context.Context) (int, error) { return 5, nil })
		if err != nil || v != 5 {
			t.Errorf("the next caller got %d, %v; want its own answer 5", v, err)
		}
	})
}

// Which earlier request a read may take, by its freshness, just inside and
// just outside each edge.
func TestFlight_takes(t *testing.T) {
	t.Parallel()
	now := time.Now()
	const age = 10 * time.Second
	const recent = freshness(age)
	type call struct {
		began          time.Duration // before now
		ended, failed  bool
		olderGen, del1 bool // of a generation before the last write; before the last delete
	}
	for _, tc := range []struct {
		name  string
		call  *call
		fresh freshness
		want  bool
	}{
		{"nothing asked yet", nil, kept, false},
		{"in flight: live joins", &call{began: time.Hour}, live, true},
		{"in flight just inside the age: recent joins", &call{began: age}, recent, true},
		{"in flight just outside the age: recent never", &call{began: age + time.Nanosecond}, recent, false},
		{"in flight: kept joins", &call{began: time.Hour}, kept, true},
		{"finished: live never", &call{ended: true}, live, false},
		{"finished just inside the age", &call{began: age, ended: true}, recent, true},
		{"finished just outside the age", &call{began: age + time.Nanosecond, ended: true}, recent, false},
		{"finished: kept takes any age", &call{began: time.Hour, ended: true}, kept, true},
		{"failed: never", &call{ended: true, failed: true}, kept, false},
		{"failing, still in flight: joins", &call{failed: true}, live, true},
		{"older generation, in flight: never", &call{olderGen: true}, live, false},
		{"older generation, finished: never", &call{olderGen: true, ended: true}, kept, false},
		{"before a delete: recent takes", &call{del1: true, ended: true}, recent, true},
		{"before a delete, in flight: live joins", &call{del1: true}, live, true},
		{"before a delete: kept never", &call{del1: true, ended: true}, kept, false},
		{"before a delete, in flight: kept never", &call{del1: true}, kept, false},
	} {
		f := flight[int]{gen: 5, del: 7}
		var c *flightCall[int]
		if tc.call != nil {
			c = &flightCall[int]{gen: f.gen, del: f.del, began: now.Add(-tc.call.began), ended: tc.call.ended}
			if tc.call.failed {
				c.err = errors.New("refused")
			}
			if tc.call.olderGen {
				c.gen--
			}
			if tc.call.del1 {
				c.del--
			}
		}
		if got := f.takes(c, tc.fresh, now); got != tc.want {
			t.Errorf("%s: takes = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// peek never waits: it answers with a finished request it may take, and
// otherwise starts one (or leaves the one in flight) and says no at once.
func TestFlight_peek(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var f flight[int]
		release := make(chan struct{})
		var fetches atomic.Int32
		fetch := func(context.Context) (int, error) {
			n := fetches.Add(1)
			<-release
			if n == 2 {
				return 0, errors.New("refused")
			}
			return int(n), nil
		}
		if _, _, ok := f.peek("k", kept, fetch); ok {
			t.Fatal("peek answered before any request")
		}
		synctest.Wait() // the first request is in flight
		if _, _, ok := f.peek("k", kept, fetch); ok || fetches.Load() != 1 {
			t.Fatalf("a second peek while the first request is in flight: answered %v, %d requests", ok, fetches.Load())
		}
		close(release)
		synctest.Wait() // the first request ended
		if v, _, ok := f.peek("k", kept, fetch); !ok || v != 1 {
			t.Fatalf("peek after the first request: %d, %v; want its answer 1", v, ok)
		}
		f.wrote()
		if _, _, ok := f.peek("k", kept, fetch); ok {
			t.Fatal("peek answered with a request older than a write")
		}
		// The second request fails and is dropped.
		synctest.Wait() // the second request has failed
		f.mu.Lock()
		_, held := f.calls["k"]
		f.mu.Unlock()
		if held {
			t.Fatal("a failed request was kept")
		}
		if _, _, ok := f.peek("k", kept, fetch); ok {
			t.Fatal("peek answered after a failed request")
		}
		synctest.Wait() // the third request has ended
		if n := fetches.Load(); n != 3 {
			t.Fatalf("%d requests, want a third: a failed one is asked again", n)
		}
	})
}

// A request peek started belongs to no caller: one who joins it and then
// stops waiting does not cancel it.
func TestFlight_peekedRequestOutlivesAJoinerWhoLeaves(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var f flight[int]
		release := make(chan struct{})
		cancelled := make(chan bool, 1)
		f.peek("k", kept, func(ctx context.Context) (int, error) {
			<-release
			cancelled <- ctx.Err() != nil
			return 7, nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		joined := make(chan error, 1)
		go func() {
			_, err := f.do(ctx, "k", kept, func(context.Context) (int, error) { return 0, errors.New("a request of its own") })
			joined <- err
		}()
		synctest.Wait() // the joiner waits for the peeked request
		cancel()
		if err := <-joined; !errors.Is(err, context.Canceled) {
			t.Errorf("the joiner got %v", err)
		}
		close(release)
		if <-cancelled {
			t.Fatal("the joiner's leaving cancelled the peeked request")
		}
		synctest.Wait() // the request has ended
		again := func(context.Context) (int, error) {
			t.Error("the last peek started a new request")
			return 0, errors.New("a new request")
		}
		if v, _, ok := f.peek("k", kept, again); !ok || v != 7 {
			t.Fatalf("peek after the request ended: %d, %v; want its answer 7", v, ok)
		}
	})
}
