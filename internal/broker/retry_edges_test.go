package broker

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// A pause is drawn from half its ceiling to the ceiling itself, both ends
// included (an odd ceiling rounded down to whole nanoseconds), down to a
// ceiling of a nanosecond: a pause of 0.
func TestBackoff_endsIncluded(t *testing.T) {
	t.Parallel()
	for _, ceiling := range []time.Duration{1, 4, 8} {
		tm := Timing{BackoffFirst: ceiling, BackoffMax: ceiling}
		seen := map[time.Duration]bool{}
		for range 300 {
			d := tm.backoff(1)
			if d < ceiling/2 || d > ceiling {
				t.Fatalf("ceiling %d ns: pause %d ns", ceiling, d)
			}
			seen[d] = true
		}
		if lo, hi := ceiling/2, ceiling/2*2; !seen[lo] || !seen[hi] {
			t.Errorf("ceiling %d ns: pauses %v, want both %d and %d among 300 draws", ceiling, seen, lo, hi)
		}
	}
}

// A pause of 0 (a ceiling of a nanosecond) is a retry at once, not the end of
// the budget: a broker that fails twice and then answers is read.
func TestRetry_zeroPauseRetries(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.Script(brokertest.Path("vhosts/%2F"), brokertest.Reply(http.StatusServiceUnavailable, ""), brokertest.Reply(http.StatusServiceUnavailable, ""))
	tm := fastTiming
	tm.BackoffFirst, tm.BackoffMax = time.Nanosecond, time.Nanosecond
	c := timedClient(t, s.URL, time.Second, tm)
	var attempts atomic.Int64
	c.observeAttempts(func(*http.Request) { attempts.Add(1) })
	if _, err := c.GetVhost(context.Background(), "/"); err != nil {
		t.Fatalf("got %v after %d attempts, want the answer after two failures", err, attempts.Load())
	}
}

// The 404s that a vhost still starting may give: to any write, and to a GET
// of a vhost or of its queue or consumer listing; not to a GET of one queue
// (a missing queue is the usual answer there) nor to other methods or paths.
func TestVhostWide(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method, path string
		want         bool
	}{
		{http.MethodPut, "/api/queues/%2F/q", true},
		{http.MethodDelete, "/api/queues/%2F/q", true},
		{http.MethodGet, "/api/vhosts/%2F", true},
		{http.MethodGet, "/api/queues/%2F", true},
		{http.MethodGet, "/api/consumers/%2F", true},
		{http.MethodGet, "/api/queues/%2F/q", false},
		{http.MethodGet, "/api/whoami", false},
		{http.MethodGet, "/api/nodes/x", false},
		{http.MethodHead, "/api/vhosts/%2F", false},
		{http.MethodPost, "/api/queues/%2F", false},
	} {
		req, err := http.NewRequest(tc.method, "http://h:15672"+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := vhostWide(req); got != tc.want {
			t.Errorf("%s %s: vhostWide %v, want %v", tc.method, tc.path, got, tc.want)
		}
	}
}
