package broker

import (
	"context"
	"sync"
	"time"
)

// Batched reads.
//
// Terraform refreshes, creates and destroys up to -parallelism resources at
// a time, and each wants the same per-vhost listing. A gatherer lets callers
// that want the same listing share one request, under one rule that keeps
// every answer fresh: a caller only ever joins a request that has not been
// sent yet. So every answer a caller gets comes from a request sent after
// that caller asked, and after every write that had finished by then; no
// answer is kept once its request completes, and nothing is cached.
//
// A batch gathers callers until one of these:
//   - it has as many callers as were ever inside the gatherer at once for
//     this key (Terraform's parallelism, learned; at least 2): nobody else is
//     coming;
//   - no request for the key is in flight and nobody arrived for a gap: the
//     time the last request for the key took, within [gatherGap,
//     gatherGapMax] (waiting up to one request's time for company costs at
//     most what the request costs, and each caller that joins saves one).
//     While a request is in flight the batch waits: its callers will be back
//     with the next resources soon, and joining them keeps Terraform's waves
//     of reads together instead of splitting them into ever smaller batches;
//   - gatherMax has passed since the batch opened (a backstop).

// Gathering windows; variables so that tests can change them.
var (
	gatherGap    = 25 * time.Millisecond
	gatherGapMax = 250 * time.Millisecond
	gatherMax    = 2 * time.Second
)

type gatherer[T any] struct {
	mu   sync.Mutex
	keys map[string]*gatherKey[T]
}

type gatherKey[T any] struct {
	pending  *gatherCall[T]
	inflight int // callers whose request is in flight
	requests int // requests in flight
	hwm      int // most callers ever inside at once (pending + in flight)
	target   int // hwm as of the last request sent: the batch size to expect
	last     time.Time
	took     time.Duration // how long the last request took
}

type gatherCall[T any] struct {
	opened  time.Time
	joined  int // callers that joined
	waiting int // callers still waiting for the answer
	flags   uint
	wake    chan struct{}
	done    chan struct{}
	cancel  context.CancelFunc
	sent    bool
	val     T
	err     error
}

// do returns the answer of a request, sent by fetch, that started after this
// call began. Callers of the same key share it; flags are OR-ed over the
// callers of a batch and handed to fetch. Cancelling ctx abandons this
// caller's wait only; the request is cancelled when no caller waits for it.
func (g *gatherer[T]) do(ctx context.Context, key string, flags uint, fetch func(context.Context, uint) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	g.mu.Lock()
	if g.keys == nil {
		g.keys = map[string]*gatherKey[T]{}
	}
	k := g.keys[key]
	if k == nil {
		k = &gatherKey[T]{}
		g.keys[key] = k
	}
	c := k.pending
	if c == nil {
		c = &gatherCall[T]{opened: time.Now(), wake: make(chan struct{}, 1), done: make(chan struct{})}
		k.pending = c
		go g.send(k, c, fetch)
	}
	c.joined++
	c.waiting++
	c.flags |= flags
	k.last = time.Now()
	k.hwm = max(k.hwm, k.inflight+c.joined)
	g.mu.Unlock()
	poke(c.wake)

	select {
	case <-c.done:
		return c.val, c.err
	case <-ctx.Done():
		g.mu.Lock()
		c.waiting--
		if c.waiting == 0 && c.sent && c.cancel != nil {
			c.cancel() // nobody wants the answer any more
		}
		g.mu.Unlock()
		poke(c.wake)
		return zero, ctx.Err()
	}
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// send waits until batch c is complete, then sends its request.
func (g *gatherer[T]) send(k *gatherKey[T], c *gatherCall[T], fetch func(context.Context, uint) (T, error)) {
	timer := time.NewTimer(gatherMax)
	defer timer.Stop()
	for {
		g.mu.Lock()
		if c.waiting == 0 {
			// Everyone gave up before the request went out.
			if k.pending == c {
				k.pending = nil
			}
			g.mu.Unlock()
			close(c.done)
			return
		}
		now := time.Now()
		wait := c.opened.Add(gatherMax).Sub(now)
		switch {
		case k.target >= 2 && c.joined >= k.target:
			wait = 0
		case k.requests == 0:
			gap := min(max(k.took, gatherGap), gatherGapMax)
			wait = min(wait, k.last.Add(gap).Sub(now))
		}
		if wait <= 0 {
			break
		}
		g.mu.Unlock()
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-c.wake:
		}
	}
	// Send: from now on nobody joins this batch.
	if k.pending == c {
		k.pending = nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.sent, c.cancel = true, cancel
	flags := c.flags
	k.target = k.hwm
	k.requests++
	k.inflight += c.joined
	g.mu.Unlock()

	start := time.Now()
	val, err := fetch(ctx, flags)
	cancel()

	g.mu.Lock()
	c.val, c.err = val, err
	k.requests--
	k.inflight -= c.joined
	k.last = time.Now()
	k.took = k.last.Sub(start)
	if k.pending != nil {
		poke(k.pending.wake) // the next batch may go once its gap has passed
	}
	g.mu.Unlock()
	close(c.done)
}
