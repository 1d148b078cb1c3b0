package broker

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// Every status keeps RabbitMQ's reason, a refused DELETE included, and only
// credentials problems read as such.
func TestDeleteQueue_refusalKeepsReason(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.PutQueue("/", brokertest.Queue{Name: "orders", Durable: true, Messages: brokertest.Count(3)})
	err := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p"}).DeleteQueue(context.Background(), "/", "orders", true)
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
	err := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p"}).DeleteQueue(context.Background(), "/", "gone", true)
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
	_, err := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RequestTimeout: timeout}).GetQueue(context.Background(), "/", "orders", Declared)
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
	c := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RequestTimeout: time.Hour})
	go func() { done <- c.DeleteQueue(ctx, "/", "orders", true) }()
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

// A guarded delete of an empty queue with a consumer is refused "in use"
// (3.10's wording): that is ErrNotEmpty too, never a deletion to carry on
// from.
func TestDeleteQueue_inUse(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.PutQueue("/", brokertest.Queue{Name: "orders", Durable: true, Messages: brokertest.Count(0), Consumers: 1})
	err := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p"}).DeleteQueue(context.Background(), "/", "orders", true)
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
	c := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p"})
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
