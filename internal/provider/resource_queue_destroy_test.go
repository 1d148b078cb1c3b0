package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

func count(n int64) *int64 { return &n }

// Deletion order and ownership: hold queues by ascending TTL, then q, then
// q.dead; nothing that is not recognised as one of q's own queues.
func TestDestroyTargetOwned(t *testing.T) {
	t.Parallel()
	target := ordersTarget
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
	want := []string{"full: 3 messages, 0 consumers", "consumed: 0 messages, 1 consumer",
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

// A queue that is not running is never deleted without force_destroy: not
// when the listing says so (nothing is deleted), not when the check just
// before its delete says so; with force_destroy everything is.
func TestDestroyRefusesQueuesNotRunning(t *testing.T) {
	t.Parallel()
	target := ordersTarget
	for _, tc := range []struct {
		name string
		// down is the state of orders in the listing; alone, when set, the
		// state a GET of orders alone reports.
		down, alone string
		// hidden leaves orders out of listings.
		hidden      bool
		force       bool
		wantErr     string
		wantDeletes string
	}{
		{name: "down in the listing", down: "down",
			wantErr: `Nothing of queue "orders" was deleted: these queues in vhost "/" are not running`},
		{name: "down just before its delete", down: "running", alone: "stopped",
			wantErr: "Deleted orders.deferred.1000; then found that these queues", wantDeletes: "orders.deferred.1000"},
		{name: "missing from the listing, down when asked alone", down: "stopped", hidden: true,
			wantErr: "orders on node rabbit@node-2: state stopped"},
		{name: "force_destroy", down: "down", force: true,
			wantDeletes: "orders.deferred.1000 orders orders.dead"},
	} {
		fake := brokertest.New(t)
		fake.PutQueue("/", brokertest.Queue{Name: "orders.deferred.1000", Messages: brokertest.Count(0)})
		fake.PutQueue("/", brokertest.Queue{Name: "orders", State: tc.down, Node: "rabbit@node-2", Messages: brokertest.Count(0)})
		fake.PutQueue("/", brokertest.Queue{Name: "orders.dead", Messages: brokertest.Count(0)})
		fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
			switch {
			case r.Method == http.MethodGet && r.URL.EscapedPath() == "/api/queues/%2F" && tc.hidden:
				// A listing answered while the node restarts: orders left out.
				_ = json.NewEncoder(w).Encode([]map[string]any{{"name": "orders.dead", "state": "running", "messages": 0}})
				return true
			case r.Method == http.MethodGet && r.URL.EscapedPath() == "/api/queues/%2F/orders" && tc.alone != "":
				_ = json.NewEncoder(w).Encode(map[string]any{"name": "orders", "state": tc.alone, "node": "rabbit@node-2",
					"durable": true, "arguments": map[string]any{}})
				return true
			}
			return false
		})
		c := fakeBrokerClient(t, fake)
		err := destroyTopology(context.Background(), c, target, tc.force)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "rabbitmqctl")):
			t.Errorf("%s: got %v, want an error with %q and what to do", tc.name, err, tc.wantErr)
		}
		deleted := deletedNames(fake)
		if got := deleted; got != tc.wantDeletes {
			t.Errorf("%s: deleted %q, want %q", tc.name, got, tc.wantDeletes)
		}
	}
}

// While a cluster node stops or starts, RabbitMQ 4.x leaves its queues out of
// a listing with message counts for a moment, where the listing without
// counts still has them. A hold queue seen only there has unknown counts:
// destroy refuses and deletes nothing (deleting orders would drop the
// messages the hold queue dead-letters into it).
func TestDestroyRefusesQueuesLeftOutOfTheCountedListing(t *testing.T) {
	t.Parallel()
	target := ordersTarget
	fake := brokertest.New(t)
	fake.PutQueue("/", brokertest.Queue{Name: "orders.deferred.5000", Messages: brokertest.Count(2), Node: "rabbit@node-2"})
	fake.PutQueue("/", brokertest.Queue{Name: "orders", Messages: brokertest.Count(0)})
	fake.PutQueue("/", brokertest.Queue{Name: "orders.dead", Messages: brokertest.Count(0)})
	fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || r.URL.EscapedPath() != "/api/queues/%2F" || r.URL.Query().Get("enable_queue_totals") != "true" {
			return false
		}
		// The counted listing of a node that is starting: node-2's queue left out.
		_ = json.NewEncoder(w).Encode([]map[string]any{
			{"name": "orders", "state": "running", "messages": 0},
			{"name": "orders.dead", "state": "running", "messages": 0},
		})
		return true
	})
	c := fakeBrokerClient(t, fake)
	err := destroyTopology(context.Background(), c, target, false)
	if err == nil || !strings.Contains(err.Error(), "orders.deferred.5000: unknown messages") || !strings.Contains(err.Error(), `Nothing of queue "orders" was deleted`) {
		t.Errorf("got %v, want a refusal naming orders.deferred.5000 with unknown messages", err)
	}
	if d := fake.RequestsMatching("DELETE "); len(d) > 0 {
		t.Errorf("destroy deleted %q while a hold queue's counts were unknown", d)
	}
}

// Queues that report "down" for a moment (a node starting) are waited for:
// once they run again within the target's wait, destroy goes on.
func TestDestroyWaitsForQueuesToRunAgain(t *testing.T) {
	t.Parallel()
	target := ordersTarget
	target.wait = 10 * time.Second
	fake := brokertest.New(t)
	fake.PutQueue("/", brokertest.Queue{Name: "orders.deferred.1000", Messages: brokertest.Count(0)})
	fake.PutQueue("/", brokertest.Queue{Name: "orders", Messages: brokertest.Count(0)})
	fake.PutQueue("/", brokertest.Queue{Name: "orders.dead", Messages: brokertest.Count(0)})
	var listings atomic.Int32
	fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || r.URL.EscapedPath() != "/api/queues/%2F" || listings.Add(1) > 2 {
			return false
		}
		// The first round of listings (with and without counts): all down.
		_ = json.NewEncoder(w).Encode([]map[string]any{
			{"name": "orders.deferred.1000", "state": "down", "node": "rabbit@node-1"},
			{"name": "orders", "state": "down", "node": "rabbit@node-1"},
			{"name": "orders.dead", "state": "down", "node": "rabbit@node-1"},
		})
		return true
	})
	c := fakeBrokerClient(t, fake)
	if err := destroyTopology(context.Background(), c, target, false); err != nil {
		t.Fatalf("destroy after the queues ran again: %v", err)
	}
	if listings.Load() <= 2 {
		t.Errorf("destroy listed the queues %d times: it did not wait for them", listings.Load())
	}
	deleted := deletedNames(fake)
	if got, want := deleted, "orders.deferred.1000 orders orders.dead"; got != want {
		t.Errorf("deleted %q, want %q", got, want)
	}
}

// Destroys that run at the same time share the checks' listings even while
// the others delete their queues (a listing may then show a queue deleted
// since: its GET alone finds nothing and its guarded DELETE answers 404,
// which counts as deleted), and the checks still refuse a busy topology.
func TestDestroysShareListingsAcrossDeletes(t *testing.T) {
	t.Parallel()
	fake := brokertest.New(t)
	const n = 20
	for i := range n {
		for _, name := range []string{"q%d", "q%d.dead", "q%d.deferred.1000"} {
			fake.PutQueue("/", brokertest.Queue{Name: fmt.Sprintf(name, i), Messages: brokertest.Count(0)})
		}
	}
	fake.PutQueue("/", brokertest.Queue{Name: "busy", Messages: brokertest.Count(0)})
	fake.PutQueue("/", brokertest.Queue{Name: "busy.dead", Messages: brokertest.Count(0)})
	fake.PutQueue("/", brokertest.Queue{Name: "busy.deferred.5000", Messages: brokertest.Count(1)})
	fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case r.Method == http.MethodGet && r.URL.EscapedPath() == "/api/queues/%2F":
			time.Sleep(20 * time.Millisecond) // a listing takes the broker a while
		case r.Method == http.MethodDelete:
			time.Sleep(5 * time.Millisecond) // and so does a delete
		}
		return false
	})
	c := fakeBrokerClient(t, fake)
	var wg sync.WaitGroup
	errs := make([]error, n+1)
	for i := range n + 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 5 * time.Millisecond) // one after the other, as Terraform starts them
			name := fmt.Sprintf("q%d", i)
			if i == n {
				name = "busy"
			}
			errs[i] = destroyTopology(context.Background(), c, destroyTarget{vhost: "/", queue: name, suffixes: topology.DefaultSuffixes()}, false)
		}()
	}
	wg.Wait()
	for i, err := range errs[:n] {
		if err != nil {
			t.Errorf("destroy of q%d: %v", i, err)
		}
	}
	if err := errs[n]; err == nil || !strings.Contains(err.Error(), "busy.deferred.5000: 1 message,") || !strings.Contains(err.Error(), `Nothing of queue "busy" was deleted`) {
		t.Errorf("destroy of busy: got %v, want a refusal naming busy.deferred.5000", err)
	}
	if got := strings.Join(fake.QueueNames("/"), " "); got != "busy busy.dead busy.deferred.5000" {
		t.Errorf("queues left: %s", got)
	}
	listings := len(fake.RequestsMatching("GET queues / ?"))
	if listings > n {
		t.Errorf("%d destroys sent %d listings (two a round): the deletes kept them from sharing", n+1, listings)
	}
	t.Logf("%d destroys: %d listings", n+1, listings)
}

// A listing that began before another destroy deleted a queue may still show
// it, with what it held: a destroy of its own topology then finds it gone
// just before its delete (404: deleted), and counts it showed refuse, never
// let a destroy through.
func TestDestroyWithAListingOlderThanADelete(t *testing.T) {
	t.Parallel()
	target := ordersTarget
	for _, tc := range []struct {
		name, wantErr, wantDeletes string
		messages                   int
	}{
		{name: "gone and empty", wantDeletes: "orders.deferred.1000 orders orders.dead"},
		{name: "gone, shown with messages", messages: 2, wantErr: "orders.deferred.1000: 2 messages"},
	} {
		fake := brokertest.New(t)
		fake.PutQueue("/", brokertest.Queue{Name: "orders", Messages: brokertest.Count(0)})
		fake.PutQueue("/", brokertest.Queue{Name: "orders.dead", Messages: brokertest.Count(0)})
		fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method != http.MethodGet || r.URL.EscapedPath() != "/api/queues/%2F" {
				return false
			}
			// Answered before orders.deferred.1000 was deleted.
			_ = json.NewEncoder(w).Encode([]map[string]any{
				{"name": "orders.deferred.1000", "state": "running", "messages": tc.messages},
				{"name": "orders", "state": "running", "messages": 0},
				{"name": "orders.dead", "state": "running", "messages": 0},
			})
			return true
		})
		c := fakeBrokerClient(t, fake)
		err := destroyTopology(context.Background(), c, target, false)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.wantErr)
		}
		deleted := deletedNames(fake)
		if got := deleted; got != tc.wantDeletes {
			t.Errorf("%s: deleted %q, want %q", tc.name, got, tc.wantDeletes)
		}
	}
}

// deletedNames lists the queues the fake was asked to delete, in order.
func deletedNames(fake *brokertest.Server) string {
	var names []string
	for _, r := range fake.RequestsMatching("DELETE ") {
		names = append(names, strings.Fields(r)[3])
	}
	return strings.Join(names, " ")
}
