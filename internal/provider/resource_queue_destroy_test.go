package provider

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

func count(n int64) *int64 { return &n }

// Deletion order and ownership: hold queues by ascending TTL, then q, then
// q.dead; nothing that is not recognised as one of q's own queues.
func TestDestroyTargetOwned(t *testing.T) {
	t.Parallel()
	target := destroyTarget{vhost: "/", queue: "orders", suffixes: topology.DefaultSuffixes()}
	queues := map[string]broker.Queue{}
	for _, n := range []string{"orders", "orders.dead", "orders.deferred.600000", "orders.deferred.30000",
		"orders.deferred.", "orders.deferred.05", "orders.deferred.5000.bak", "orders2", "orders2.deferred.1000", "orders.deadish"} {
		queues[n] = broker.Queue{Name: n}
	}
	var got []string
	for _, q := range target.owned(queues) {
		got = append(got, q.Name)
	}
	want := "orders.deferred.30000 orders.deferred.600000 orders orders.dead"
	if strings.Join(got, " ") != want {
		t.Errorf("owned = %v, want %s", got, want)
	}
}

// A count the management API has not reported is unknown, never 0: it makes
// the queue busy (destroy waits, then refuses), and only with withUnknown is
// it listed.
func TestBusy(t *testing.T) {
	t.Parallel()
	queues := []broker.Queue{
		{Name: "idle", Messages: count(0), Consumers: count(0)},
		{Name: "full", Messages: count(3), Consumers: count(0)},
		{Name: "consumed", Messages: count(0), Consumers: count(1)},
		{Name: "fresh", Messages: nil, Consumers: count(0)},
	}
	lines, unknown := busy(queues, true)
	if !unknown {
		t.Error("an unreported count did not count as unknown")
	}
	want := []string{"full: 3 messages, 0 consumers", "consumed: 0 messages, 1 consumers",
		"fresh: unknown messages, 0 consumers (not reported by the management API yet)"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("busy = %q, want %q", lines, want)
	}
	lines, unknown = busy(queues, false)
	if !unknown || len(lines) != 2 {
		t.Errorf("busy without unknown = %q, %v", lines, unknown)
	}
	if lines, unknown := busy(queues[:1], true); len(lines) != 0 || unknown {
		t.Errorf("an idle queue is busy: %q, %v", lines, unknown)
	}
}

// downBroker is a management API with the queues of "orders" in vhost "v":
// listed holds the states the listing reports, single those a GET of one
// queue reports (a queue missing from single is gone). It records every
// DELETE.
type downBroker struct {
	mu      sync.Mutex
	listed  map[string]string
	single  map[string]string
	deletes []string
}

func (b *downBroker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	p := r.URL.EscapedPath()
	switch {
	case r.Method == http.MethodGet && p == "/api/consumers/v":
		_, _ = io.WriteString(w, `[]`)
	case r.Method == http.MethodGet && p == "/api/queues/v":
		var out []map[string]any
		for name, state := range b.listed {
			q := map[string]any{"name": name, "state": state, "node": "rabbit@node-2"}
			if state == "running" {
				q["messages"] = 0
			}
			out = append(out, q)
		}
		_ = json.NewEncoder(w).Encode(out)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/api/queues/v/"):
		state, ok := b.single[strings.TrimPrefix(p, "/api/queues/v/")]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":"Object Not Found","reason":"Not Found"}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"name": strings.TrimPrefix(p, "/api/queues/v/"), "state": state,
			"node": "rabbit@node-2", "durable": true, "auto_delete": false, "arguments": map[string]any{}})
	case r.Method == http.MethodDelete:
		b.deletes = append(b.deletes, strings.TrimPrefix(p, "/api/queues/v/"))
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// A queue that is not running is never deleted without force_destroy: not
// when the listing says so (nothing is deleted), not when the check just
// before its delete says so; with force_destroy everything is.
func TestDestroyRefusesQueuesNotRunning(t *testing.T) {
	t.Parallel()
	target := destroyTarget{vhost: "v", queue: "orders", suffixes: topology.DefaultSuffixes()}
	for _, tc := range []struct {
		name           string
		listed, single map[string]string
		force          bool
		wantErr        string
		wantDeletes    string
	}{
		{
			name:    "down in the listing",
			listed:  map[string]string{"orders": "down", "orders.dead": "running", "orders.deferred.1000": "running"},
			single:  map[string]string{"orders": "stopped", "orders.dead": "running", "orders.deferred.1000": "running"},
			wantErr: "Nothing was deleted: these queues in vhost \"v\" are not running",
		},
		{
			name:        "down just before its delete",
			listed:      map[string]string{"orders": "running", "orders.dead": "running", "orders.deferred.1000": "running"},
			single:      map[string]string{"orders": "stopped", "orders.dead": "running", "orders.deferred.1000": "running"},
			wantErr:     "Deleted orders.deferred.1000; then found that these queues",
			wantDeletes: "orders.deferred.1000",
		},
		{
			name:        "missing from the listing, down when asked alone",
			listed:      map[string]string{"orders.dead": "running"},
			single:      map[string]string{"orders": "stopped", "orders.dead": "running"},
			wantErr:     "orders on node rabbit@node-2: state stopped",
			wantDeletes: "",
		},
		{
			name:        "force_destroy",
			listed:      map[string]string{"orders": "down", "orders.dead": "running"},
			single:      map[string]string{"orders": "stopped", "orders.dead": "running"},
			force:       true,
			wantDeletes: "orders orders.dead",
		},
	} {
		b := &downBroker{listed: tc.listed, single: tc.single}
		srv := httptest.NewServer(b)
		c, err := broker.New(broker.Config{Endpoint: srv.URL, RetryBudget: -1})
		if err != nil {
			t.Fatal(err)
		}
		err = destroyTopology(context.Background(), c, target, tc.force)
		srv.Close()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "rabbitmqctl")):
			t.Errorf("%s: got %v, want an error with %q and what to do", tc.name, err, tc.wantErr)
		}
		if got := strings.Join(b.deletes, " "); got != tc.wantDeletes {
			t.Errorf("%s: deleted %q, want %q", tc.name, got, tc.wantDeletes)
		}
	}
}
