package broker

import (
	"context"
	"errors"
	"testing"
	"time"
)

// waitFor fails the test when ch does not deliver within a second.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

type flightResult struct {
	val int
	err error
}

// A failed request of an older generation drops only itself: the request of
// the current generation stays in flight for later callers to join.
func TestFlight_failureDropsOnlyItself(t *testing.T) {
	t.Parallel()
	var f flight[int]
	ctx := context.Background()
	startedA, releaseA := make(chan struct{}), make(chan struct{})
	startedB, releaseB := make(chan struct{}), make(chan struct{})
	resA, resB, resC := make(chan flightResult, 1), make(chan flightResult, 1), make(chan flightResult, 1)
	go func() {
		v, err := f.do(ctx, "k", false, func(context.Context) (int, error) {
			close(startedA)
			<-releaseA
			return 0, errors.New("A failed")
		})
		resA <- flightResult{v, err}
	}()
	waitFor(t, startedA, "request A")
	f.wrote() // a write: the next caller may not join A
	go func() {
		v, err := f.do(ctx, "k", false, func(context.Context) (int, error) {
			close(startedB)
			<-releaseB
			return 2, nil
		})
		resB <- flightResult{v, err}
	}()
	waitFor(t, startedB, "request B")
	close(releaseA)
	if r := waitFor(t, resA, "A's caller"); r.err == nil {
		t.Fatal("A's caller got no error")
	}
	calledC := make(chan struct{}, 1)
	go func() {
		v, err := f.do(ctx, "k", false, func(context.Context) (int, error) {
			calledC <- struct{}{}
			return 3, nil
		})
		resC <- flightResult{v, err}
	}()
	// C joins B (its caller is counted) before B ends.
	deadline := time.Now().Add(time.Second)
	for {
		f.mu.Lock()
		joined := f.calls["k"] != nil && f.calls["k"].waiting == 2
		f.mu.Unlock()
		if joined || len(calledC) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(releaseB)
	if r := waitFor(t, resC, "C's caller"); r.err != nil || r.val != 2 || len(calledC) != 0 {
		t.Errorf("C got %d, %v (own request: %v), want B's answer 2", r.val, r.err, len(calledC) != 0)
	}
	waitFor(t, resB, "B's caller")
}

// A request whose only caller stopped waiting is cancelled and forgotten: the
// next caller starts a request of its own, never joins the abandoned one.
func TestFlight_abandonedRequestCancelled(t *testing.T) {
	t.Parallel()
	var f flight[int]
	cancelled, finish := make(chan struct{}), make(chan struct{})
	started := make(chan struct{})
	t.Cleanup(func() { close(finish) })
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan flightResult, 1)
	go func() {
		v, err := f.do(ctx, "k", false, func(fctx context.Context) (int, error) {
			close(started)
			<-fctx.Done()
			close(cancelled)
			<-finish // still winding down when the next caller comes
			return 0, fctx.Err()
		})
		res <- flightResult{v, err}
	}()
	waitFor(t, started, "the request")
	cancel()
	if r := waitFor(t, res, "the caller"); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("the cancelled caller got %v", r.err)
	}
	waitFor(t, cancelled, "the abandoned request's cancellation")
	next, cancelNext := context.WithTimeout(context.Background(), time.Second)
	defer cancelNext()
	v, err := f.do(next, "k", false, func(context.Context) (int, error) { return 5, nil })
	if err != nil || v != 5 {
		t.Errorf("the next caller got %d, %v; want its own answer 5", v, err)
	}
}
