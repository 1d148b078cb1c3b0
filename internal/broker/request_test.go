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

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

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
	c := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p"})
	for range 5 {
		if _, err := c.listQueuesNow(context.Background(), "/", 0); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Conns(); n != 1 {
		t.Errorf("5 listings in turn opened %d connections, want 1", n)
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
		{"most down", brokertest.Reply(200, `[{"name":"a@h","running":true},{"name":"b@h","running":false},{"name":"c@h","running":false}]`), "[b@h c@h] of 3"},
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
			c := mustNew(t, Config{Endpoint: s.URL, Username: "u", Password: "p", RequestTimeout: time.Second, RetryBudget: -1})
			err := c.DeclareQueue(context.Background(), "/", "q", nil)
			e := errOf(err)
			down := fmt.Sprintf("%v of %d", e.NodesDown, e.Nodes)
			switch {
			case err == nil:
				t.Fatal("an unanswered declaration succeeded")
			case tc.want != "" && (!errors.Is(err, ErrUnavailable) || e.Cause != CauseNoMajority || down != tc.want):
				t.Errorf("got %v (%s), want ErrUnavailable with %s", err, down, tc.want)
			case tc.want == "" && (errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrUnreachable)):
				t.Errorf("got %v, want ErrUnreachable, not ErrUnavailable", err)
			}
		})
	}
}
