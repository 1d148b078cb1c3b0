package broker

import (
	"context"
	"sync"
	"time"
)

// Shared reads. Terraform runs up to -parallelism operations at once in one provider process, each
// wanting the same listing of a vhost. A flight shares it under the caller's Freshness:
//
//   - Live (the live data source, the actions) joins only a request in flight: every answer is at
//     most one request old.
//   - Recent (the listing a destroy checks) takes the answer of a request begun at most
//     timing.checkAge before the call, so a destroy run lists a crowded vhost about once per
//     checkAge, not once per round of -parallelism. What a destroy deletes is confirmed queue by
//     queue, and the guarded DELETE is the broker's own check.
//   - Kept (Read in plan and refresh, the plan warning) also takes a finished answer of any age, so
//     a plan of N queues lists each vhost once.
//
// No read takes an answer older than this client's last write: a write moves the flight to a new
// generation. Errors are never kept. For the destroy checks only (see deleted), a delete does not
// move the generation: an older answer then only lists a queue that is gone, which the destroy
// reads alone and sends a guarded DELETE (a 404 counts as deleted).
type flight[T any] struct {
	mu  sync.Mutex
	gen uint64
	// del counts the queue deletes that left gen alone.
	del   uint64
	calls map[string]*flightCall[T]
}

type flightCall[T any] struct {
	gen   uint64
	del   uint64
	began time.Time
	// detached: started by peek for no caller; a caller who leaves does not cancel it.
	detached bool
	done     chan struct{}
	ended    bool
	waiting  int
	cancel   context.CancelFunc
	val      T
	err      error
}

// freshness: 0 live, negative kept, positive the largest age of a request's start.
type freshness time.Duration

const (
	live freshness = 0
	kept freshness = -1
)

// do returns the shared answer of fetch for key; the request is cancelled when nobody waits.
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

// peek returns the answer a read of freshness fresh may take once its request has finished;
// otherwise false at once, having made sure such a request is in flight (one no caller's
// cancellation ends). A failed request is not kept.
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

// takes reports whether a read of freshness fresh at now may take c's answer (f.mu held).
func (f *flight[T]) takes(c *flightCall[T], fresh freshness, now time.Time) bool {
	if c == nil || c.gen != f.gen || (c.ended && c.err != nil) {
		return false
	}
	if fresh < 0 {
		return c.del == f.del
	}
	if fresh > 0 {
		// In flight or finished, never older than the age.
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

// leave records that a caller stopped waiting, and cancels a request nobody waits for.
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

// wrote moves the flight to a new generation: nothing asked before is shared after.
func (f *flight[T]) wrote() {
	f.mu.Lock()
	f.gen++
	f.mu.Unlock()
}

// deleted records a queue delete: kept reads take nothing asked before it, live and recent may.
func (f *flight[T]) deleted() {
	f.mu.Lock()
	f.del++
	f.mu.Unlock()
}
