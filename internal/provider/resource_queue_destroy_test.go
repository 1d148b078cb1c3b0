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

	"errors"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

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
		{Name: "idle", Messages: brokertest.Count(0), Consumers: brokertest.Count(0)},
		{Name: "full", Messages: brokertest.Count(3), Consumers: brokertest.Count(0)},
		{Name: "consumed", Messages: brokertest.Count(0), Consumers: brokertest.Count(1)},
		{Name: "fresh", Messages: nil, Consumers: brokertest.Count(0)},
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
// when the checks read it alone (its state is what its own GET says,
// whatever the listing showed; nothing is deleted), not when the look just
// before its delete says so; with force_destroy everything is deleted.
func TestDestroyRefusesQueuesNotRunning(t *testing.T) {
	t.Parallel()
	target := ordersTarget
	for _, tc := range []struct {
		name string
		// state is the state of orders (listings and GETs); alone, when set,
		// the state a GET of orders alone reports instead; later, when set,
		// the state every GET of orders alone after the first reports.
		state, alone, later string
		// hidden leaves orders out of listings.
		hidden      bool
		force       bool
		wantErr     string
		wantDeletes string
	}{
		{name: "down when checked", state: "down",
			wantErr: `Nothing of queue "orders" was deleted: these queues in vhost "/" are not running`},
		{name: "running in the listing, stopped when read alone", state: "running", alone: "stopped",
			wantErr: `Nothing of queue "orders" was deleted: these queues in vhost "/" are not running`},
		{name: "stopped just before its delete", state: "running", later: "stopped",
			wantErr: "Deleted orders.deferred.1000; then found that these queues", wantDeletes: "orders.deferred.1000"},
		{name: "missing from the listing, down when asked alone", state: "stopped", hidden: true,
			wantErr: "orders on node rabbit@node-2: state stopped"},
		{name: "force_destroy", state: "down", force: true,
			wantDeletes: "orders.deferred.1000 orders orders.dead"},
	} {
		fake := brokertest.New(t)
		fake.PutQueue("/", brokertest.Queue{Name: "orders.deferred.1000", Messages: brokertest.Count(0)})
		fake.PutQueue("/", brokertest.Queue{Name: "orders", State: tc.state, Node: "rabbit@node-2", Messages: brokertest.Count(0)})
		fake.PutQueue("/", brokertest.Queue{Name: "orders.dead", Messages: brokertest.Count(0)})
		var gets atomic.Int32
		fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
			alone := tc.alone
			if r.Method == http.MethodGet && r.URL.EscapedPath() == "/api/queues/%2F/orders" && tc.later != "" && gets.Add(1) > 1 {
				alone = tc.later
			}
			switch {
			case r.Method == http.MethodGet && r.URL.EscapedPath() == "/api/queues/%2F" && tc.hidden:
				// A listing answered while the node restarts: orders left out.
				_ = json.NewEncoder(w).Encode([]map[string]any{{"name": "orders.dead", "state": "running", "messages": 0}})
				return true
			case r.Method == http.MethodGet && r.URL.EscapedPath() == "/api/queues/%2F/orders" && alone != "":
				_ = json.NewEncoder(w).Encode(map[string]any{"name": "orders", "state": alone, "node": "rabbit@node-2",
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
// counts still has them. A hold queue seen only there is still checked: on
// 4.x its own GET gives its count; where a GET gives none (3.10), its count is
// unknown. Either way destroy refuses and deletes nothing (deleting orders
// would drop the messages the hold queue dead-letters into it).
func TestDestroyRefusesQueuesLeftOutOfTheCountedListing(t *testing.T) {
	t.Parallel()
	target := ordersTarget
	for _, tc := range []struct {
		name, want     string
		noSingleCounts bool
	}{
		{name: "4.x", want: "orders.deferred.5000: 2 messages"},
		{name: "3.10", want: "orders.deferred.5000: unknown messages", noSingleCounts: true},
	} {
		fake := brokertest.New(t)
		if tc.noSingleCounts {
			fake.NoSingleQueueCounts()
		}
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
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `Nothing of queue "orders" was deleted`) {
			t.Errorf("%s: got %v, want a refusal naming %q", tc.name, err, tc.want)
		}
		if d := fake.RequestsMatching("DELETE "); len(d) > 0 {
			t.Errorf("%s: destroy deleted %q while a hold queue held messages", tc.name, d)
		}
	}
}

// Where the broker reports a queue's live count on its own GET (4.x), that
// count decides, not an older listing's; where it does not (3.10), the
// listing's count is taken and the guarded DELETE is what refuses a queue
// that received a message since, before anything of the topology is deleted.
func TestDestroyCountsOfTheQueueItself(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, want     string
		noSingleCounts bool
	}{
		{name: "4.x: refused by the check", want: "orders.deferred.1000: 1 message, 0 consumers"},
		{name: "3.10: refused by the guarded delete", want: brokertest.NotEmptyReason("/", "orders.deferred.1000"),
			noSingleCounts: true},
	} {
		fake := brokertest.New(t)
		if tc.noSingleCounts {
			fake.NoSingleQueueCounts()
		}
		putIdle(fake, "orders", "orders.dead")
		fake.PutQueue("/", brokertest.Queue{Name: "orders.deferred.1000", Messages: brokertest.Count(1)})
		fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method != http.MethodGet || r.URL.EscapedPath() != "/api/queues/%2F" {
				return false
			}
			// Listed before the hold queue received its message.
			_ = json.NewEncoder(w).Encode([]map[string]any{
				{"name": "orders.deferred.1000", "state": "running", "messages": 0},
				{"name": "orders", "state": "running", "messages": 0},
				{"name": "orders.dead", "state": "running", "messages": 0},
			})
			return true
		})
		err := destroyTopology(context.Background(), fakeBrokerClient(t, fake), ordersTarget, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `Nothing of queue "orders" was deleted`) {
			t.Errorf("%s: got %v, want a refusal with %q", tc.name, err, tc.want)
		}
		if got := strings.Join(fake.QueueNames("/"), " "); got != "orders orders.dead orders.deferred.1000" {
			t.Errorf("%s: queues left: %s", tc.name, got)
		}
	}
}

// Queues that report "down" for a moment (a node starting) are waited for:
// once they run again within the target's wait, destroy goes on, after a
// listing made since the wait.
func TestDestroyWaitsForQueuesToRunAgain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		messages    int64 // in orders when the queues run again
		wantErr     bool
		wantDeleted string
	}{
		{0, false, "orders.deferred.1000 orders orders.dead"},
		// Checked again after the wait: refused, and nothing deleted.
		{2, true, ""},
	} {
		target := ordersTarget
		target.wait = 10 * time.Second
		fake := brokertest.New(t)
		putIdle(fake, "orders.deferred.1000", "orders.dead")
		orders := idle("orders")
		orders.Messages = brokertest.Count(tc.messages)
		fake.PutQueue("/", orders)
		var gets atomic.Int32
		fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
			path := r.URL.EscapedPath()
			if r.Method != http.MethodGet || !strings.HasPrefix(path, "/api/queues/%2F/") || gets.Add(1) > 3 {
				return false
			}
			// The first look at each queue alone: down.
			_ = json.NewEncoder(w).Encode(map[string]any{"name": strings.TrimPrefix(path, "/api/queues/%2F/"), "state": "down",
				"node": "rabbit@node-1", "durable": true, "arguments": map[string]any{}})
			return true
		})
		err := destroyTopology(context.Background(), fakeBrokerClient(t, fake), target, false)
		var refused *refusedError
		if tc.wantErr != errors.As(err, &refused) {
			t.Fatalf("%d messages: destroy after the queues ran again: %v", tc.messages, err)
		}
		if n := fake.Listings("/"); n < 4 {
			t.Errorf("%d messages: destroy sent %d listings: it did not list again after waiting", tc.messages, n)
		}
		if got := deletedNames(fake); got != tc.wantDeleted {
			t.Errorf("%d messages: deleted %q, want %q", tc.messages, got, tc.wantDeleted)
		}
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
			errs[i] = destroyTopology(context.Background(), c, ownedQueues{vhost: "/", queue: name, suffixes: topology.DefaultSuffixes()}, false)
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
	if listings > 2 {
		t.Errorf("%d destroys sent %d listings (two a round): the deletes kept them from sharing one round", n+1, listings)
	}
	t.Logf("%d destroys: %d listings", n+1, listings)
}

// A listing that began before another destroy deleted a queue may still show
// it, with what it held: the destroy of its own topology finds it gone when
// it asks for it alone, does not refuse for what the listing showed, and
// still sends it its guarded DELETE (a queue a recovering node has not
// brought back yet answers 404 too), whose 404 counts as deleted.
func TestDestroyWithAListingOlderThanADelete(t *testing.T) {
	t.Parallel()
	target := ordersTarget
	for _, messages := range []int{0, 2} {
		fake := brokertest.New(t)
		putIdle(fake, "orders", "orders.dead")
		fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method != http.MethodGet || r.URL.EscapedPath() != "/api/queues/%2F" {
				return false
			}
			// Answered before orders.deferred.1000 was deleted.
			_ = json.NewEncoder(w).Encode([]map[string]any{
				{"name": "orders.deferred.1000", "state": "running", "messages": messages},
				{"name": "orders", "state": "running", "messages": 0},
				{"name": "orders.dead", "state": "running", "messages": 0},
			})
			return true
		})
		c := fakeBrokerClient(t, fake)
		if err := destroyTopology(context.Background(), c, target, false); err != nil {
			t.Errorf("listed with %d messages: %v", messages, err)
		}
		if got, want := strings.Join(fake.RequestsMatching("DELETE "), "|"), "DELETE queues / orders.deferred.1000 ?if-empty=true&if-unused=true|"+
			"DELETE queues / orders ?if-empty=true&if-unused=true|DELETE queues / orders.dead ?if-empty=true&if-unused=true"; got != want {
			t.Errorf("listed with %d messages: sent %q, want %q", messages, got, want)
		}
	}
}

func deletedNames(fake *brokertest.Server) string {
	var names []string
	for _, r := range fake.RequestsMatching("DELETE ") {
		names = append(names, strings.Fields(r)[3])
	}
	return strings.Join(names, " ")
}

// fakeBrokerClient is the management API client of the provider data of the fake s (fakeData),
// which does not retry.
func fakeBrokerClient(t *testing.T, s *brokertest.Server) *broker.Client {
	return fakeBrokerMover(t, s).Client
}

// fakeBrokerMover is fakeBrokerClient with the message mover beside it, whose AMQP port is closed,
// as the provider builds them.
func fakeBrokerMover(t *testing.T, s *brokertest.Server) brokerMover {
	t.Helper()
	d := fakeData(t, s.URL)
	m, diags := d.messageMover()
	if diags.HasError() {
		t.Fatal(diags)
	}
	return brokerMover{d.client, m}
}

// idle returns an empty queue of that name as the fake holds it.
func idle(name string) brokertest.Queue {
	return brokertest.Queue{Name: name, Durable: true, Messages: brokertest.Count(0)}
}

// putIdle puts empty queues of these names in the fake's vhost "/".
func putIdle(s *brokertest.Server, names ...string) {
	for _, n := range names {
		s.PutQueue("/", idle(n))
	}
}

var ordersTarget = ownedQueues{vhost: "/", queue: "orders", suffixes: topology.DefaultSuffixes()}

// Destroy deletes the hold queues by ascending TTL, then q, then q.dead, each
// guarded with if-empty and if-unused, and nothing that is not q's own.
func TestDestroyTopology_order(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	putIdle(s, "orders", "orders.dead", "orders.deferred.600000", "orders.deferred.30000", "orders.deferred.05", "orders2")
	if err := destroyTopology(context.Background(), fakeBrokerClient(t, s), ordersTarget, false); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(s.RequestsMatching("DELETE"), "\n")
	want := strings.Join([]string{
		"DELETE queues / orders.deferred.30000 ?if-empty=true&if-unused=true",
		"DELETE queues / orders.deferred.600000 ?if-empty=true&if-unused=true",
		"DELETE queues / orders ?if-empty=true&if-unused=true",
		"DELETE queues / orders.dead ?if-empty=true&if-unused=true",
	}, "\n")
	if got != want {
		t.Errorf("deletes:\n%s\nwant:\n%s", got, want)
	}
	if left := strings.Join(s.QueueNames("/"), " "); left != "orders.deferred.05 orders2" {
		t.Errorf("left on the broker: %s", left)
	}
}

// One busy queue, a hold queue included, and nothing at all is deleted; the
// error lists every busy queue with its counts.
func TestDestroyTopology_allOrNothing(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.PutQueue("/", idle("orders"))
	s.PutQueue("/", idle("orders.dead"))
	s.PutQueue("/", brokertest.Queue{Name: "orders.deferred.30000", Durable: true, Messages: brokertest.Count(2)})
	s.PutQueue("/", brokertest.Queue{Name: "orders.deferred.60000", Durable: true, Messages: brokertest.Count(0), Consumers: 1})
	err := destroyTopology(context.Background(), fakeBrokerClient(t, s), ordersTarget, false)
	var refused *refusedError
	if !errors.As(err, &refused) {
		t.Fatalf("err = %v, want a refusal", err)
	}
	for _, want := range []string{`Nothing of queue "orders" was deleted`, "orders.deferred.30000: 2 messages, 0 consumers", "orders.deferred.60000: 0 messages, 1 consumer\n", "force_destroy = true"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%s", want, err)
		}
	}
	if d := s.RequestsMatching("DELETE"); len(d) > 0 {
		t.Errorf("a refused destroy sent %q", d)
	}
}

// A count the management API has not reported is unknown, never 0: destroy
// waits for it (up to the target's wait, none here) and then refuses, saying so.
func TestDestroyTopology_unknownCount(t *testing.T) {
	s := brokertest.New(t)
	s.PutQueue("/", brokertest.Queue{Name: "orders", Durable: true}) // no messages field
	s.PutQueue("/", idle("orders.dead"))
	err := destroyTopology(context.Background(), fakeBrokerClient(t, s), ordersTarget, false)
	if err == nil || !strings.Contains(err.Error(), "orders: unknown messages, 0 consumers (not reported by the management API yet)") {
		t.Fatalf("err = %v", err)
	}
	if d := s.RequestsMatching("DELETE"); len(d) > 0 {
		t.Errorf("destroy deleted %q with a count unknown", d)
	}
}

// With force_destroy, queues that hold messages are deleted without guards.
func TestDestroyTopology_force(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.PutQueue("/", brokertest.Queue{Name: "orders", Durable: true, Messages: brokertest.Count(5), Consumers: 2})
	s.PutQueue("/", brokertest.Queue{Name: "orders.deferred.1000", Durable: true})
	if err := destroyTopology(context.Background(), fakeBrokerClient(t, s), ordersTarget, true); err != nil {
		t.Fatal(err)
	}
	// orders.dead, which the fake lacks, is still sent its DELETE (a 404:
	// deleted), as a queue a recovering node has not listed yet would be.
	got := strings.Join(s.RequestsMatching("DELETE"), "\n")
	if want := "DELETE queues / orders.deferred.1000\nDELETE queues / orders\nDELETE queues / orders.dead"; got != want {
		t.Errorf("deletes:\n%s\nwant:\n%s", got, want)
	}
}

// A node that answers again after a restart recovers its queues one by one:
// the main and dead-letter queues, missing from its listing and from a
// look-up, are still sent their guarded DELETEs, and deleted.
func TestDestroyTopology_queuesNotRecoveredYet(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	putIdle(s, "orders", "orders.dead")
	s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/api/queues/") {
			return false
		}
		if strings.Count(strings.TrimPrefix(r.URL.EscapedPath(), "/api/queues/"), "/") == 0 {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("[]")) // the vhost's listing, without them
			return true
		}
		brokertest.ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
		return true
	})
	if err := destroyTopology(context.Background(), fakeBrokerClient(t, s), ordersTarget, false); err != nil {
		t.Fatal(err)
	}
	if left := s.QueueNames("/"); len(left) > 0 {
		t.Errorf("destroy left %q behind; requests:\n%s", left, strings.Join(s.Requests(), "\n"))
	}
	for _, d := range s.RequestsMatching("DELETE") {
		if !strings.Contains(d, "if-empty=true&if-unused=true") {
			t.Errorf("unguarded delete %q", d)
		}
	}
}

// A queue gone between the check and its delete (404) counts as deleted.
func TestDestroyTopology_notFoundIsDeleted(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	putIdle(s, "orders", "orders.dead", "orders.deferred.30000")
	s.FailDelete("orders.deferred.30000", http.StatusNotFound, "Object Not Found", "Not Found")
	if err := destroyTopology(context.Background(), fakeBrokerClient(t, s), ordersTarget, false); err != nil {
		t.Fatalf("a 404 on delete failed the destroy: %v", err)
	}
	if left := s.QueueNames("/"); len(left) != 1 || left[0] != "orders.deferred.30000" {
		t.Errorf("left on the broker: %q (only the queue the fake refused to find should remain)", left)
	}
}

// A guarded delete the broker refuses (a message arrived after the check)
// stops the destroy there, says what was deleted, and keeps RabbitMQ's reason.
func TestDestroyTopology_refusedMidway(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	putIdle(s, "orders", "orders.dead", "orders.deferred.30000")
	s.FailDelete("orders", http.StatusBadRequest, "bad_request", "queue 'orders' in vhost '/' is not empty")
	err := destroyTopology(context.Background(), fakeBrokerClient(t, s), ordersTarget, false)
	var refused *refusedError
	if !errors.As(err, &refused) {
		t.Fatalf("err = %v, want a refusal", err)
	}
	for _, want := range []string{"Deleted orders.deferred.30000; then RabbitMQ refused", "is not empty"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%s", want, err)
		}
	}
	if strings.Contains(strings.ToLower(err.Error()), "login") || strings.Contains(strings.ToLower(err.Error()), "password") {
		t.Errorf("a refused delete reads like a login failure:\n%s", err)
	}
	if _, ok := s.Queue("/", "orders.dead"); !ok {
		t.Error("orders.dead was deleted after the refusal")
	}
}

// A queue whose vhost is gone is gone with it: its destroy succeeds, with or
// without force_destroy, and sends no DELETE (a vhost deleted by hand, or by
// the queuey_queue's own vhost being destroyed first).
func TestDestroyTopology_vhostGone(t *testing.T) {
	t.Parallel()
	for _, force := range []bool{false, true} {
		s := brokertest.New(t)
		s.AddVhost("gone", "")
		s.PutQueue("gone", idle("orders"))
		s.RemoveVhost("gone")
		target := ordersTarget
		target.vhost = "gone"
		if err := destroyTopology(context.Background(), fakeBrokerClient(t, s), target, force); err != nil {
			t.Errorf("force %v: destroying a queue of a vanished vhost: %v", force, err)
		}
		if d := s.RequestsMatching("DELETE"); len(d) > 0 {
			t.Errorf("force %v: sent %q to a vanished vhost", force, d)
		}
	}
}

// When every queue runs and reports its counts, destroy does not wait: the
// target's wait bounds a wait for queues that are not ready, nothing else.
func TestDestroyTopology_readyQueuesAreNotWaitedFor(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	putIdle(s, "orders", "orders.dead", "orders.deferred.30000")
	target := ordersTarget
	target.wait = 10 * time.Second
	start := time.Now()
	if err := destroyTopology(context.Background(), fakeBrokerClient(t, s), target, false); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("destroying idle, running queues took %s: it waited for nothing", took)
	}
	if left := s.QueueNames("/"); len(left) > 0 {
		t.Errorf("left on the broker: %q", left)
	}
}

// A delete that fails for another reason than a refusal stops the destroy
// there, and the error names what was deleted before it.
func TestDestroyTopology_failsMidway(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		failing, want string
	}{
		{"orders", "deleted orders.deferred.30000, then: "},
		{"orders.deferred.30000", ""},
	} {
		s := brokertest.New(t)
		putIdle(s, "orders", "orders.dead", "orders.deferred.30000")
		s.FailDelete(tc.failing, http.StatusInternalServerError, "internal_error", "boom")
		err := destroyTopology(context.Background(), fakeBrokerClient(t, s), ordersTarget, false)
		if err == nil || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("failing %s: %v", tc.failing, err)
		}
		if tc.want != "" && !strings.HasPrefix(err.Error(), tc.want) || tc.want == "" && strings.HasPrefix(err.Error(), "deleted") {
			t.Errorf("failing %s: %v, want it to start with %q", tc.failing, err, tc.want)
		}
		if _, ok := s.Queue("/", "orders.dead"); !ok {
			t.Errorf("failing %s: orders.dead was deleted after the failure", tc.failing)
		}
	}
}

// A vhost deleted while the destroy runs takes the rest of the queues with
// it: the destroy succeeds.
func TestDestroyTopology_vhostGoneMidway(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.AddVhost("going", "")
	for _, n := range []string{"orders", "orders.dead", "orders.deferred.30000"} {
		s.PutQueue("going", idle(n))
	}
	var once sync.Once
	s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodDelete {
			once.Do(func() { s.RemoveVhost("going") })
		}
		return false
	})
	target := ordersTarget
	target.vhost = "going"
	if err := destroyTopology(context.Background(), fakeBrokerClient(t, s), target, false); err != nil {
		t.Fatalf("a vhost deleted during the destroy failed it: %v", err)
	}
	if got := len(s.RequestsMatching("DELETE")); got != 3 {
		t.Errorf("sent %d DELETEs, want one for each queue of the topology: %q", got, s.Requests())
	}
}

// A vhost deleted after the listing a destroy takes was made: the checks find
// it gone, and so is the topology (nothing to refuse, no error).
func TestDestroyTopology_vhostGoneSinceTheListing(t *testing.T) {
	t.Parallel()
	fake := brokertest.New(t)
	fake.AddVhost("v", "")
	for _, name := range []string{"a", "a.dead", "orders", "orders.dead"} {
		fake.PutQueue("v", idle(name))
	}
	c := fakeBrokerClient(t, fake)
	target := ordersTarget
	target.vhost = "v"
	other := target
	other.queue = "a"
	if err := destroyTopology(context.Background(), c, other, false); err != nil {
		t.Fatal(err)
	}
	fake.RemoveVhost("v")
	if err := destroyTopology(context.Background(), c, target, false); err != nil {
		t.Errorf("destroy after its vhost was deleted: %v", err)
	}
	if n := fake.Listings("v"); n != 2 {
		t.Errorf("%d listings, want the first destroy's 2 only (the second takes them)", n)
	}
}

// A destroy refused because q.dead holds messages names, besides
// force_destroy, both actions, the -invoke command and the before_destroy
// trigger; one refused over q alone does not.
func TestDestroyRefusal_namesDeadLetterActions(t *testing.T) {
	s := brokertest.New(t)
	putIdle(s, "orders")
	dead := idle("orders.dead")
	dead.Messages = brokertest.Count(3)
	s.PutQueue("/", dead)
	err := destroyTopology(context.Background(), fakeBrokerClient(t, s), ordersTarget, false)
	if err == nil {
		t.Fatal("destroy of a q.dead with messages was not refused")
	}
	for _, want := range []string{"force_destroy = true", `action "queuey_redrive_dead_letters" "orders"`,
		"terraform apply -invoke=action.queuey_redrive_dead_letters.orders", "Terraform 1.14", `action "queuey_purge_dead_letters"`,
		"events  = [before_destroy]", "actions = [action.queuey_purge_dead_letters.orders]", "Terraform 1.16"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q:\n%s", want, err)
		}
	}

	s2 := brokertest.New(t)
	putIdle(s2, "orders.dead")
	busyQ := idle("orders")
	busyQ.Messages = brokertest.Count(3)
	s2.PutQueue("/", busyQ)
	err = destroyTopology(context.Background(), fakeBrokerClient(t, s2), ordersTarget, false)
	if err == nil || strings.Contains(err.Error(), "queuey_redrive_dead_letters") {
		t.Errorf("a refusal over q alone names the dead-letter actions: %v", err)
	}
}

// A destroy refused over the messages of q.dead names the dead-letter
// actions, with the queue's vhost in every block (an action without one takes
// the provider's); one refused over another queue does not. Refused before
// anything was deleted, it offers the redrive and the before_destroy trigger;
// refused midway, after q was deleted, only the purge: a redrive would need q
// declared again, the apply the advice must never lead to.
func TestDestroyRefusal_deadLetterAdvice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, vhost string
		deadHolds   bool   // q.dead holds a message at the checks
		refused     string // the queue whose guarded DELETE is refused, if any
		redrive     bool
		purge       bool
	}{
		{"checks, default vhost", "/", true, "", true, true},
		{"checks, other vhost", "team", true, "", true, true},
		{"midway at q.dead, default vhost", "/", false, "orders.dead", false, true},
		{"midway at q.dead, other vhost", "team", false, "orders.dead", false, true},
		{"midway at q", "/", false, "orders", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := brokertest.New(t)
			if tc.vhost != "/" {
				s.AddVhost(tc.vhost, "")
			}
			s.PutQueue(tc.vhost, idle("orders"))
			dead := idle("orders.dead")
			if tc.deadHolds {
				dead.Messages = brokertest.Count(3)
			}
			s.PutQueue(tc.vhost, dead)
			if tc.refused != "" {
				s.FailDelete(tc.refused, http.StatusBadRequest, "bad_request", "queue '"+tc.refused+"' in vhost '"+tc.vhost+"' is not empty")
			}
			target := ordersTarget
			target.vhost = tc.vhost
			err := destroyTopology(context.Background(), fakeBrokerClient(t, s), target, false)
			if err == nil {
				t.Fatal("the destroy went through")
			}
			msg := err.Error()
			for what, c := range map[string]struct {
				text string
				want bool
			}{
				"the redrive":       {`action "queuey_redrive_dead_letters" "orders"`, tc.redrive},
				"the trigger":       {"events  = [before_destroy]", tc.redrive},
				"the purge":         {`action "queuey_purge_dead_letters" "orders"`, tc.purge},
				"the queue's vhost": {fmt.Sprintf("vhost = %q", tc.vhost), tc.purge},
			} {
				if got := strings.Contains(msg, c.text); got != c.want {
					t.Errorf("names %s: %v, want %v:\n%s", what, got, c.want, msg)
				}
			}
		})
	}
}

// The checks read the vhost's consumers beside the queues: when that read
// fails, the destroy fails with its error and deletes nothing.
func TestDestroyTopology_consumersUnread(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	putIdle(s, "orders", "orders.dead")
	s.Script(brokertest.Path("consumers/%2F"), brokertest.Reply(http.StatusForbidden, `{"error":"not_authorized","reason":"Access refused"}`))
	err := destroyTopology(context.Background(), fakeBrokerClient(t, s), ordersTarget, false)
	if !errors.Is(err, broker.ErrUnauthorized) {
		t.Fatalf("destroy with its consumers unread: %v, want the refusal", err)
	}
	if got := deletedNames(s); got != "" {
		t.Errorf("deleted %q with the consumers unread", got)
	}
}
