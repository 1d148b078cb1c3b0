package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"sync"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

func fakeClient(t *testing.T, s *brokertest.Server, timeout time.Duration) *Client {
	t.Helper()
	return mustNew(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RequestTimeout: timeout, RetryBudget: -1})
}

// Every status keeps RabbitMQ's reason, a refused DELETE included, and only
// credentials problems read as such.
func TestDeleteQueue_refusalKeepsReason(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.PutQueue("/", brokertest.Queue{Name: "orders", Durable: true, Messages: brokertest.Count(3)})
	err := fakeClient(t, s, 5*time.Second).DeleteQueue(context.Background(), "/", "orders", true)
	if !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("err = %v, want ErrNotEmpty", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, `deleting queue "orders" in vhost "/"`) || !strings.Contains(msg, "HTTP 400: queue 'orders' in vhost '/' not empty") {
		t.Errorf("error = %s", msg)
	}
	if strings.Contains(strings.ToLower(msg), "login") || strings.Contains(strings.ToLower(msg), "password") {
		t.Errorf("a refused delete reads like a login failure: %s", msg)
	}
}

// A 404 on DELETE is ErrNotFound; the caller decides it means deleted.
func TestDeleteQueue_notFound(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	err := fakeClient(t, s, 5*time.Second).DeleteQueue(context.Background(), "/", "gone", true)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

// A broker that never answers fails each attempt at request_timeout, with an
// error that names the endpoint. Only a lower bound on time is asserted.
func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		return true
	})
	const timeout = 200 * time.Millisecond
	start := time.Now()
	_, err := fakeClient(t, s, timeout).GetQueue(context.Background(), "/", "orders", Declared)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), s.URL) {
		t.Fatalf("err = %v, want ErrUnreachable naming %s", err, s.URL)
	}
	if took := time.Since(start); took < timeout {
		t.Errorf("gave up after %s, before request_timeout %s", took, timeout)
	}
}

// Every call honours its context, DELETE included: a cancelled destroy stops
// without waiting for the broker.
func TestDeleteQueue_honoursContext(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.PutQueue("/", brokertest.Queue{Name: "orders", Durable: true, Messages: brokertest.Count(0)})
	arrived := make(chan struct{}, 1)
	s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodDelete {
			return false
		}
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
			return true // the client went away: nothing is deleted
		case <-time.After(2 * time.Second):
			return false // a client still waiting gets the queue deleted
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fakeClient(t, s, time.Hour).DeleteQueue(ctx, "/", "orders", true) }()
	<-arrived
	cancel()
	err := <-done
	if err == nil || !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("err = %v, want the cancellation", err)
	}
	if _, ok := s.Queue("/", "orders"); !ok {
		t.Error("the queue was deleted")
	}
}

// The endpoint rule lives here, for the provider and the client alike.
func TestValidateEndpoint(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"http://127.0.0.1:15672":            "",
		"https://rabbit.example:15671/":     "",
		"http://u:secret@127.0.0.1:15672":   "",
		"http://127.0.0.1:15672/?vhost=x":   "without a query or fragment",
		"http://127.0.0.1:15672?":           "without a query or fragment",
		"http://127.0.0.1:15672/#top":       "without a query or fragment",
		"ftp://127.0.0.1":                   `has scheme "ftp"`,
		"http://":                           "has no host",
		"127.0.0.1:15672":                   `"127.0.0.1:15672" has no scheme: write it as http://127.0.0.1:15672`,
		"localhost:15672":                   `"localhost:15672" has no scheme`,
		"u:secret@rabbit:15672":             `"xxxxx@rabbit:15672" has no scheme`,
		"http://rabbit:15672:1":             `"http://rabbit:15672:1" does not parse`,
		"http://u:secret@127.0.0.1:15672/?": "without a query",
	} {
		_, err := ValidateEndpoint(raw)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("ValidateEndpoint(%q) = %v, want %q", raw, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("ValidateEndpoint(%q) leaks the password: %v", raw, err)
		}
	}
	if _, err := New(Config{Endpoint: "http://127.0.0.1:15672/?x=1"}); err == nil {
		t.Error("New accepted an endpoint with a query")
	}
}

// Answers decoded from a chunked body ending in a newline, whose last chunk
// comes after the value (what Go's json.Encoder behind a proxy sends, as the
// bench's fake broker did; RabbitMQ 3.10 sends a Content-Length and no
// newline) leave the connection open for the next request: one connection
// serves them all.
func TestKeepAlive_chunkedListings(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.Intercept(func(w http.ResponseWriter, _ *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		var b strings.Builder
		b.WriteString("[")
		for i := range 2000 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"name":"q%d","state":"running"}`, i)
		}
		b.WriteString("]")
		_ = json.NewEncoder(w).Encode(json.RawMessage(b.String())) // chunked, with a trailing newline
		// The last chunk comes a moment later, as through a proxy.
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		time.Sleep(20 * time.Millisecond)
		return true
	})
	c := fakeClient(t, s, 5*time.Second)
	for range 5 {
		if _, err := c.listQueuesNow(context.Background(), "/", 0); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Conns(); n != 1 {
		t.Errorf("5 listings in turn opened %d connections, want 1", n)
	}
}

// A guarded delete of an empty queue with a consumer is refused "in use"
// (3.10's wording): that is ErrNotEmpty too, never a deletion to carry on
// from.
func TestDeleteQueue_inUse(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.PutQueue("/", brokertest.Queue{Name: "orders", Durable: true, Messages: brokertest.Count(0), Consumers: 1})
	err := fakeClient(t, s, 5*time.Second).DeleteQueue(context.Background(), "/", "orders", true)
	if !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), brokertest.InUseReason("/", "orders")) {
		t.Fatalf("err = %v, want ErrNotEmpty with the broker's reason", err)
	}
	if _, ok := s.Queue("/", "orders"); !ok {
		t.Error("the queue was deleted")
	}
}

// A request with a body says it is JSON; one without a body says nothing
// of its content type.
func TestRequests_contentTypeOnlyWithBody(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	var mu sync.Mutex
	seen := map[string]string{} // method → Content-Type
	s.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		seen[r.Method] = r.Header.Get("Content-Type")
		mu.Unlock()
		return false
	})
	c := fakeClient(t, s, 5*time.Second)
	ctx := context.Background()
	if err := c.DeclareQueue(ctx, "/", "q", map[string]any{"x-max-length": 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetQueue(ctx, "/", "q", Declared); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteQueue(ctx, "/", "q", false); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for method, want := range map[string]string{http.MethodPut: "application/json", http.MethodGet: "", http.MethodDelete: ""} {
		if got, ok := seen[method]; !ok || got != want {
			t.Errorf("%s: Content-Type %q (sent: %v), want %q", method, got, ok, want)
		}
	}
}

// A write that gets no answer in time is a cluster without a majority when
// the broker reports at least half of its nodes down (a half is no
// majority); with fewer down, or when the nodes cannot be read or there are
// none, it stays an unanswered request.
// request_timeout is a second: the client's backstop (one more
// request_timeout) must not end the request before the attempt's own timeout
// does, however late a busy machine runs either.
func TestWriteTimeout_majorityRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		nodes brokertest.Answer
		want  string // the nodes down and the node count; "" for no ErrUnavailable
	}{
		{"half down", brokertest.Reply(200, `[{"name":"a@h","running":true},{"name":"b@h","running":false}]`), "[b@h] of 2"},
		{"all down", brokertest.Reply(200, `[{"name":"a@h","running":false}]`), "[a@h] of 1"},
		{"a minority down", brokertest.Reply(200, `[{"name":"a@h","running":true},{"name":"b@h","running":false},{"name":"c@h","running":true}]`), ""},
		{"no nodes listed", brokertest.Reply(200, `[]`), ""},
		{"nodes not readable", brokertest.Reply(403, `{"error":"not_authorised","reason":"Not monitor user"}`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := brokertest.New(t)
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			s.Script(brokertest.Path("nodes"), tc.nodes)
			s.Intercept(func(http.ResponseWriter, *http.Request) bool {
				<-release // the metadata store never answers in time
				return true
			})
			c, err := New(Config{Endpoint: s.URL, Username: "u", Password: "p", RequestTimeout: time.Second, RetryBudget: -1})
			if err != nil {
				t.Fatal(err)
			}
			err = c.DeclareQueue(context.Background(), "/", "q", nil)
			switch {
			case err == nil:
				t.Fatal("an unanswered declaration succeeded")
			case tc.want != "" && (!errors.Is(err, ErrUnavailable) || causeOf(err) != CauseNoMajority || nodesDown(err) != tc.want):
				t.Errorf("got %v (%s), want ErrUnavailable with %s", err, nodesDown(err), tc.want)
			case tc.want == "" && (errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrUnreachable)):
				t.Errorf("got %v, want ErrUnreachable, not ErrUnavailable", err)
			}
		})
	}
}
