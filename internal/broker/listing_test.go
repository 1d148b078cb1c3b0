package broker

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// A listing counts as recent from its start for timing.checkAge, and not
// once this client wrote after it began.
func TestCountsAsRecent(t *testing.T) {
	c := mustNew(t, Config{Endpoint: "http://rabbit:15672", Username: "u", Password: "p"})
	c.lastWrite.Store(time.Now().Add(-time.Hour).UnixNano())
	age := c.transport.tm.checkAge
	for _, tc := range []struct {
		began time.Time
		want  bool
	}{
		{time.Now(), true},
		{time.Now().Add(-age / 2), true},
		{time.Now().Add(-age - time.Second), false},
		{time.Now().Add(time.Minute), false}, // a clock that went back
	} {
		if got := c.CountsAsRecent(tc.began); got != tc.want {
			t.Errorf("began %s ago: %v, want %v", time.Since(tc.began).Round(time.Second), got, tc.want)
		}
	}
	began := time.Now()
	c.wrote()
	if c.CountsAsRecent(began) {
		t.Error("a listing that began before a write counts as recent")
	}
}

// The listing the checks before a destroy find their queues in is taken from
// a request that began at most timing.checkAge before the call, across queue
// deletes, never across a declaration; consumers are counted by a request of
// the call's own.
func TestReads_recentQueuesWithinCheckAge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		age      time.Duration
		wantSeqs []int64 // the listing each of three calls got
	}{
		{"a long age: one listing", time.Hour, []int64{2, 2, 2}},
		{"an age shorter than a call: a listing each", time.Nanosecond, []int64{2, 4, 6}},
	} {
		b := brokertest.New(t)
		b.AddVhost("v", "")
		b.StampListings()
		b.PutQueue("v", brokertest.Queue{Name: "gone", Messages: brokertest.Count(0)})
		c := mustNew(t, Config{Endpoint: b.URL, Username: "u", Password: "p", RetryBudget: -1, timing: timing{checkAge: tc.age}})
		ctx := context.Background()
		var seqs []int64
		for i := range 3 {
			qsList, err := c.ListQueues(ctx, "v", Checked, Recent)
			qs := qsList.Queues
			if err != nil {
				t.Fatal(err)
			}
			seqs = append(seqs, seqOf(qs))
			if _, err := c.ListQueues(ctx, "v", Consumers, Live); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				if err := c.DeleteQueue(ctx, "v", "gone", true); err != nil {
					t.Fatal(err)
				}
			}
		}
		if fmt.Sprint(seqs) != fmt.Sprint(tc.wantSeqs) {
			t.Errorf("%s: the calls got listings %v, want %v", tc.name, seqs, tc.wantSeqs)
		}
		if n := len(b.RequestsMatching("GET consumers v")); n != 3 {
			t.Errorf("%s: 3 calls sent %d consumer listings, want 3 (never kept)", tc.name, n)
		}
		if err := c.DeclareQueue(ctx, "v", "new", nil); err != nil {
			t.Fatal(err)
		}
		qsList, err := c.ListQueues(ctx, "v", Checked, Recent)
		qs := qsList.Queues
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := qs["new"]; !ok {
			t.Errorf("%s: after a declaration, a recent read got an older listing without the queue declared", tc.name)
		}
	}
}

// MarkWritten (a purge or a move over AMQP, even one that failed: it may have moved messages
// before it failed) is a write of this client: the destroy checks after it never take a listing
// asked before it.
func TestReads_markWrittenEndsRecentListings(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	b.AddVhost("v", "")
	b.StampListings()
	c := mustNew(t, Config{Endpoint: b.URL, Username: "u", Password: "p", RetryBudget: -1, timing: timing{checkAge: time.Hour}})
	ctx := context.Background()
	for i := range 2 {
		if _, err := queuesOf(c, ctx, "v", Checked, Recent); err != nil {
			t.Fatal(err)
		}
		c.MarkWritten()
		qs, err := queuesOf(c, ctx, "v", Checked, Recent)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := seqOf(qs), int64(2*i+4); got != want {
			t.Errorf("mark %d: the checks after it got listing %d, want a new one (%d)", i, got, want)
		}
	}
}

// A kept CheckedWithConsumers listing says when its listing's request began: before the
// broker answered a held listing, and the same time again for a later call
// that takes the kept answer (what a destroy's plan hands over; see CountsAsRecent).
func TestListQueues_began(t *testing.T) {
	t.Parallel()
	b, c := newReadsBroker(t)
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		hold := make(chan struct{})
		b.HoldListings(hold)
		asked := time.Now()
		type answer struct {
			began time.Time
			err   error
		}
		first := make(chan answer, 1)
		go func() {
			l, err := c.ListQueues(ctx, "v", CheckedWithConsumers, Kept)
			first <- answer{l.Began, err}
		}()
		synctest.Wait()                   // the listings are held
		time.Sleep(50 * time.Millisecond) // the broker takes a while to answer
		answered := time.Now()
		close(hold)
		a := <-first
		if a.err != nil {
			t.Fatal(a.err)
		}
		if a.began.Before(asked) || !a.began.Before(answered) {
			t.Errorf("began %v after the call, want before the broker answered (%v after the call)", a.began.Sub(asked), answered.Sub(asked))
		}
		time.Sleep(20 * time.Millisecond)
		again, err := c.ListQueues(ctx, "v", CheckedWithConsumers, Kept)
		if err != nil {
			t.Fatal(err)
		}
		if !again.Began.Equal(a.began) {
			t.Errorf("a kept answer began %v, want its request's %v", again.Began, a.began)
		}
	})
}
