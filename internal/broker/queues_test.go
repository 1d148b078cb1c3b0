package broker

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// A listing asks for the declarations only when a caller reads them, and
// for live message totals only when a caller reads counts.
func TestListQuery(t *testing.T) {
	t.Parallel()
	const base = "disable_stats=true&sort=&columns=name,state,node"
	const decl = ",type,durable,auto_delete,exclusive,arguments"
	for flags, want := range map[uint]string{
		0:                             base,
		withDeclarations:              base + decl,
		withCounts:                    "enable_queue_totals=true&" + base + ",messages",
		withCounts | withDeclarations: "enable_queue_totals=true&" + base + decl + ",messages",
	} {
		if got := listQuery(flags); got != want {
			t.Errorf("listQuery(%b) = %q, want %q", flags, got, want)
		}
	}
}

// A queue read back keeps its arguments; one without arguments (RabbitMQ
// may answer null) has an empty map, never nil.
func TestGetQueue_declaredArguments(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.PutQueue("/", brokertest.Queue{Name: "with", Durable: true, Arguments: map[string]any{"x-max-length": 7}})
	s.PutQueue("/", brokertest.Queue{Name: "without", Durable: true})
	c := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p"})
	q, err := c.GetQueue(context.Background(), "/", "with", Declared)
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Arguments["x-max-length"]; got != json.Number("7") {
		t.Errorf("arguments of a queue with x-max-length 7: %v", q.Arguments)
	}
	q, err = c.GetQueue(context.Background(), "/", "without", Declared)
	if err != nil {
		t.Fatal(err)
	}
	if q.Arguments == nil || len(q.Arguments) != 0 {
		t.Errorf("arguments of a queue without any: %#v, want an empty map", q.Arguments)
	}
}

// A message count is a whole number or unknown (nil): never a guess from a
// A GET of one queue asks for its live message total: 4.x reports it, 3.10
// does not (nil: unknown, never 0); state and node come either way.
func TestGetQueue_counted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		noSingleCounts bool
		want           string
	}{
		{"4.x", false, "3"},
		{"3.10", true, "unknown"},
	} {
		s := brokertest.New(t)
		if tc.noSingleCounts {
			s.NoSingleQueueCounts()
		}
		s.PutQueue("/", brokertest.Queue{Name: "q", Messages: brokertest.Count(3), State: "stopped", Node: "rabbit@n2"})
		c := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p"})
		q, err := c.GetQueue(context.Background(), "/", "q", Counted)
		if err != nil {
			t.Fatal(err)
		}
		got := "unknown"
		if q.Messages != nil {
			got = strconv.FormatInt(*q.Messages, 10)
		}
		if got != tc.want || q.State != "stopped" || q.Node != "rabbit@n2" || q.Vhost != "/" {
			t.Errorf("%s: messages %s, state %q, node %q, vhost %q; want %s, stopped, rabbit@n2, /", tc.name, got, q.State, q.Node, q.Vhost, tc.want)
		}
		if r := s.RequestsMatching("GET queues / q"); len(r) != 1 || !strings.Contains(r[0], "enable_queue_totals=true") {
			t.Errorf("%s: requests %q, want one GET asking for totals", tc.name, r)
		}
		if _, err := c.GetQueue(context.Background(), "/", "nope", Counted); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: a missing queue: %v, want ErrNotFound", tc.name, err)
		}
	}
}

// A queue whose node is down, asked for with totals, comes back from 4.3
// without its node (seen in the resil stage's cluster): it is asked for again
// without totals, so that a refusal can name the node.
func TestGetQueue_nodeOfAStoppedQueue(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.PutQueue("/", brokertest.Queue{Name: "q", State: "stopped", Node: "rabbit@n2"})
	s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Query().Get("enable_queue_totals") != "true" {
			return false
		}
		_, _ = w.Write([]byte(`{"name":"q","vhost":"/","state":"stopped"}`))
		return true
	})
	q, err := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p"}).GetQueue(context.Background(), "/", "q", Counted)
	if err != nil {
		t.Fatal(err)
	}
	if q.State != "stopped" || q.Node != "rabbit@n2" || q.Messages != nil {
		t.Errorf("got state %q, node %q, messages %v; want stopped on rabbit@n2, unknown", q.State, q.Node, q.Messages)
	}
	if n := len(s.RequestsMatching("GET queues / q")); n != 2 {
		t.Errorf("%d GETs, want 2 (with totals, then without)", n)
	}
}

// number that is not one.
func TestCount(t *testing.T) {
	t.Parallel()
	if count(nil) != nil {
		t.Error("no count read as a number")
	}
	for in, want := range map[json.Number]int64{"0": 0, "7": 7, "9007199254740993": 9007199254740993} {
		if got := count(&in); got == nil || *got != want {
			t.Errorf("count(%s) = %v, want %d", in, got, want)
		}
	}
	for _, in := range []json.Number{"1.5", "1e3", "x"} {
		if got := count(&in); got != nil {
			t.Errorf("count(%s) = %d, want unknown", in, *got)
		}
	}
}

// A declaration always sends its arguments as a JSON object, {} when there
// are none (RabbitMQ compares them with the queue's), and exactly those
// given.
func TestDeclareQueue_argumentsObject(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	var mu sync.Mutex
	var bodies []string
	s.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(strings.NewReader(string(b)))
			mu.Lock()
			bodies = append(bodies, string(b))
			mu.Unlock()
		}
		return false
	})
	c := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p"})
	if err := c.DeclareQueue(context.Background(), "/", "plain", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.DeclareQueue(context.Background(), "/", "bounded", map[string]any{"x-max-length": 7}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || !strings.Contains(bodies[0], `"arguments":{}`) || !strings.Contains(bodies[1], `"arguments":{"x-max-length":7}`) {
		t.Errorf("declaration bodies %q, want arguments {} and then {\"x-max-length\":7}", bodies)
	}
}

// Each queue of a consumer check carries the number of its consumers, and
// a failed consumer listing fails the check: never read as no consumers.
func TestListQueues_consumers(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.PutQueue("/", brokertest.Queue{Name: "busy", Durable: true, Messages: brokertest.Count(0), Consumers: 2})
	s.PutQueue("/", brokertest.Queue{Name: "idle", Durable: true, Messages: brokertest.Count(0)})
	qs, err := queuesOf(fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p"}), context.Background(), "/", CheckedWithConsumers, Live)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"busy": 2, "idle": 0} {
		if got := qs[name].Consumers; got == nil || *got != want {
			t.Errorf("%s: consumers %v, want %d", name, got, want)
		}
	}

	s.Script(brokertest.Path("consumers/%2F"), brokertest.Reply(500, `{"error":"internal_error","reason":"boom"}`))
	if _, err := queuesOf(fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p"}), context.Background(), "/", CheckedWithConsumers, Live); err == nil {
		t.Error("a failed consumer listing gave a consumer check")
	}
}
