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

// A write that gets no answer in time is a cluster without a majority when
// the broker reports at least half of its nodes down (a half is no
// majority); with fewer down, or when the nodes cannot be read or there are
// none, it stays an unanswered request.
func TestWriteTimeout_majorityRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		nodes brokertest.Answer
		want  string // "" for no ErrUnavailable
	}{
		{"half down", brokertest.Reply(200, `[{"name":"a@h","running":true},{"name":"b@h","running":false}]`), "1 of the cluster's 2 nodes are not running (b@h)"},
		{"all down", brokertest.Reply(200, `[{"name":"a@h","running":false}]`), "1 of the cluster's 1 nodes"},
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
			c, err := New(Config{Endpoint: s.URL, Username: "u", Password: "p", RequestTimeout: 50 * time.Millisecond, RetryBudget: -1})
			if err != nil {
				t.Fatal(err)
			}
			err = c.DeclareQueue(context.Background(), "/", "q", nil)
			switch {
			case err == nil:
				t.Fatal("an unanswered declaration succeeded")
			case tc.want != "" && (!errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want ErrUnavailable saying %q", err, tc.want)
			case tc.want == "" && (errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrUnreachable)):
				t.Errorf("got %v, want ErrUnreachable, not ErrUnavailable", err)
			}
		})
	}
}
