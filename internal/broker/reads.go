package broker

import (
	"context"
	"sync"
	"time"
)

// Shared reads.
//
// Terraform runs up to -parallelism operations at a time in one provider
// process, and each wants the same per-vhost listing. A flight lets them
// share it, under three rules, which a caller of ListQueues picks with its
// Freshness (Live, Recent, Kept):
//
//   - A live read (the live data source, the dead-letter actions) joins only
//     a request still in flight, never a finished one: every answer is at
//     most one request old.
//   - A recent read (the listing that finds the queues a destroy checks)
//     takes the answer, finished or in flight, of a request that began at
//     most a set age before the call (Timing.CheckAge). A listing costs the
//     broker time in proportion to the queues of the whole vhost, and a
//     destroy run with a live read per round of -parallelism destroys would
//     list a crowded vhost N/parallelism times; a recent read lists it about
//     once per CheckAge instead. Such an answer can lack what others did in
//     the broker since it began (a hold queue declared, a message published):
//     never anything from before the provider process, which lists only
//     once a run has begun. What a destroy deletes is confirmed queue by
//     queue (see the provider's destroy checks), and the guarded DELETE is
//     the broker's own check at the moment of deletion.
//   - A kept read (Read during plan and refresh, the plan-time warning) also
//     takes the finished answer of an earlier request of any age, so a plan
//     of N queues lists each vhost once.
//
// None ever gets an answer older than the last write this client made:
// every write (a declaration, a delete, a purge, a redrive) moves the
// flight to a new generation, and a request of an older generation is neither
// joined nor kept after it. Errors are never kept.
//
// One exception, for the checks before a destroy only (see deleted): a live
// or recent read there may take an answer to a request that began before
// this client deleted a queue. A delete only takes away the queue deleted, so
// such an answer differs from a later one, as far as this client's own writes
// go, only by listing a queue that is gone, with what it held before: the
// destroy that finds one of its own queues there reads it alone, finds
// nothing, and sends it the guarded DELETE, whose 404 counts as deleted. Any
// other write (a declaration can add a queue that an older answer lacks)
// moves the generation for every read.
type flight[T any] struct {
	mu  sync.Mutex
	gen uint64
	// del counts the queue deletes that left gen alone (see deleted).
	del   uint64
	calls map[string]*flightCall[T]
}

type flightCall[T any] struct {
	gen   uint64
	del   uint64
	began time.Time
	// detached: started by peek for no caller; a caller who joins it and
	// leaves does not cancel it.
	detached bool
	done     chan struct{}
	ended    bool
	waiting  int
	cancel   context.CancelFunc
	val      T
	err      error
}

// freshness says which earlier answers a read may take (see above): live
// (0) only a request in flight, kept (negative) any answer since the last
// write, and a positive age the answer of a request that began at most that
// long before the call.
type freshness time.Duration

const (
	live freshness = 0
	kept freshness = -1
)

// do returns the answer of fetch for key, shared as described above.
// Cancelling ctx abandons this caller's wait only; the request is cancelled
// when nobody waits for it any more.
func (f *flight[T]) do(ctx context.Context, key string, fresh freshness, fetch func(context.Context) (T, error)) (T, error) {
	val, _, err := f.doAt(ctx, key, fresh, fetch)
	return val, err
}

// doAt is do that also returns when the answer's request began.
func (f *flight[T]) doAt(ctx context.Context, key string, fresh freshness, fetch func(context.Context) (T, error)) (T, time.Time, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, time.Time{}, err
	}
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]*flightCall[T]{}
	}
	c := f.calls[key]
	if !f.takes(c, fresh, time.Now()) {
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c = &flightCall[T]{gen: f.gen, del: f.del, began: time.Now(), done: make(chan struct{}), cancel: cancel}
		f.calls[key] = c
		go f.run(fctx, key, c, fetch)
	}
	c.waiting++
	f.mu.Unlock()

	select {
	case <-c.done:
		f.leave(c)
		return c.val, c.began, c.err
	case <-ctx.Done():
		f.leave(c)
		return zero, time.Time{}, ctx.Err()
	}
}

// peek returns the answer a read of freshness fresh may take when its request
// has finished. Otherwise it returns false at once, having made sure such a
// request is in flight: it starts one of its own, which no caller's
// cancellation ends. For a caller with another way to what it needs: it
// takes the shared answer once there, never waits for it. A failed request
// is not kept, so the next peek asks again.
func (f *flight[T]) peek(key string, fresh freshness, fetch func(context.Context) (T, error)) (T, time.Time, bool) {
	var zero T
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]*flightCall[T]{}
	}
	if c := f.calls[key]; f.takes(c, fresh, time.Now()) {
		if c.ended {
			return c.val, c.began, true
		}
		return zero, time.Time{}, false
	}
	fctx, cancel := context.WithCancel(context.Background())
	c := &flightCall[T]{gen: f.gen, del: f.del, began: time.Now(), detached: true, done: make(chan struct{}), cancel: cancel}
	f.calls[key] = c
	go f.run(fctx, key, c, fetch)
	return zero, time.Time{}, false
}

// takes reports whether a read of freshness fresh, called at now, may take
// the answer of c (the flight's newest request for its key, or nil). The
// caller holds f.mu.
func (f *flight[T]) takes(c *flightCall[T], fresh freshness, now time.Time) bool {
	switch {
	case c == nil || c.gen != f.gen || (c.ended && c.err != nil):
		return false
	case fresh < 0:
		return c.del == f.del
	case fresh > 0:
		// In flight or finished, never older than the age: a listing
		// retried through a restart can be in flight for long.
		return now.Sub(c.began) <= time.Duration(fresh)
	}
	return !c.ended
}

func (f *flight[T]) run(ctx context.Context, key string, c *flightCall[T], fetch func(context.Context) (T, error)) {
	val, err := fetch(ctx)
	f.mu.Lock()
	c.val, c.err, c.ended = val, err, true
	if err != nil && f.calls[key] == c {
		delete(f.calls, key)
	}
	f.mu.Unlock()
	c.cancel()
	close(c.done)
}

// leave records that a caller stopped waiting, and cancels a request nobody
// waits for.
func (f *flight[T]) leave(c *flightCall[T]) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c.waiting--
	if c.waiting == 0 && !c.ended && !c.detached {
		c.cancel()
		for k, v := range f.calls {
			if v == c {
				delete(f.calls, k)
			}
		}
	}
}

// wrote moves the flight to a new generation: nothing asked before it is
// shared with a caller that comes after it.
func (f *flight[T]) wrote() {
	f.mu.Lock()
	f.gen++
	f.mu.Unlock()
}

// deleted records that this client deleted a queue: a kept read takes
// nothing asked before it, a live or recent read may still take a request
// asked before it (see the type's comment). Only for the flights of the
// destroy checks.
func (f *flight[T]) deleted() {
	f.mu.Lock()
	f.del++
	f.mu.Unlock()
}
