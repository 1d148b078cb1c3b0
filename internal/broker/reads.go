package broker

import (
	"context"
	"sync"
)

// Shared reads.
//
// Terraform runs up to -parallelism operations at a time in one provider
// process, and each wants the same per-vhost listing. A flight lets them
// share it, under two rules:
//
//   - A live read (the checks before a destroy, the live data source) joins
//     only a request still in flight, never a finished one: every answer is
//     at most one request old.
//   - A kept read (Read during plan and refresh, the plan-time warning) also
//     takes the finished answer of an earlier request, so a plan of N queues
//     lists each vhost once.
//
// Neither ever gets an answer older than the last write this client made:
// every write (a declaration, a delete) moves the
// flight to a new generation, and a request of an older generation is neither
// joined nor kept after it. Errors are never kept.
//
// One exception, for the checks before a destroy only (see deleted): a live
// read there may join a request in flight that began before this client
// deleted a queue. A delete only takes away the queue deleted, so such an
// answer differs from a later one only by listing a queue that is gone, with
// what it held before: the destroy that finds one of its own queues there
// confirms it with a GET of that queue alone and sends it the guarded DELETE,
// whose 404 counts as deleted; counts and states it shows can only refuse a
// destroy, never let one through. Any other write (a declaration can add a
// queue that an older answer lacks) moves the generation for every read.
type flight[T any] struct {
	mu  sync.Mutex
	gen uint64
	// del counts the queue deletes that left gen alone (see deleted).
	del   uint64
	calls map[string]*flightCall[T]
}

type flightCall[T any] struct {
	gen     uint64
	del     uint64
	done    chan struct{}
	ended   bool
	waiting int
	cancel  context.CancelFunc
	val     T
	err     error
}

// do returns the answer of fetch for key, shared as described above.
// Cancelling ctx abandons this caller's wait only; the request is cancelled
// when nobody waits for it any more.
func (f *flight[T]) do(ctx context.Context, key string, keep bool, fetch func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]*flightCall[T]{}
	}
	c := f.calls[key]
	if c == nil || c.gen != f.gen || (keep && c.del != f.del) || (c.ended && (!keep || c.err != nil)) {
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c = &flightCall[T]{gen: f.gen, del: f.del, done: make(chan struct{}), cancel: cancel}
		f.calls[key] = c
		go f.run(fctx, key, c, fetch)
	}
	c.waiting++
	f.mu.Unlock()

	select {
	case <-c.done:
		f.leave(c)
		return c.val, c.err
	case <-ctx.Done():
		f.leave(c)
		return zero, ctx.Err()
	}
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
	if c.waiting == 0 && !c.ended {
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
// nothing asked before it, a live read may still join a request in flight
// (see the type's comment). Only for the flight of the destroy checks.
func (f *flight[T]) deleted() {
	f.mu.Lock()
	f.del++
	f.mu.Unlock()
}
