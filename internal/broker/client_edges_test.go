package broker

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// redact hides what stands before the last "@" of the authority, whatever
// the shape of the string: the password of a URL, the user info of a
// string without a scheme or with an empty one (even when empty, so the
// output never tells), never an "@" in the path.
func TestRedact(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://u:secret@h:15672":        "http://u:xxxxx@h:15672",
		"http://h:15672":                 "http://h:15672",
		"u:secret@rabbit:15672":          "xxxxx@rabbit:15672",
		"http://u:secret@rabbit:15672:1": "http://xxxxx@rabbit:15672:1",
		"://u:secret@h":                  "://xxxxx@h",
		"://h/p@x":                       "://h/p@x",
		"h/p@x":                          "h/p@x",
		"/p@x":                           "/p@x",
		"h?q=a@b":                        "h?q=a@b",
		"@h":                             "xxxxx@h",
		"rabbit:15672":                   "rabbit:15672",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
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
	if _, err := c.GetQueueDeclaration(ctx, "/", "q"); err != nil {
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
