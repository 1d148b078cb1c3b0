package topology

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func declared(name string, args map[string]any) NamedQueue {
	return NamedQueue{Name: name, Existing: Existing{Type: "classic", Durable: true, Arguments: args}}
}

func TestLogicalQueues(t *testing.T) {
	s := DefaultSuffixes()
	undurable := declared("soft", nil)
	undurable.Durable = false
	quorum := declared("qq", nil)
	quorum.Type = "quorum"
	badDead := declared("bd.dead", map[string]any{"x-message-ttl": 5.0})
	queues := []NamedQueue{
		declared("orders.dead", map[string]any{"x-queue-type": "classic"}),
		declared("orders", map[string]any{"x-message-ttl": 86400000.0, "x-max-priority": json.Number("10"), "x-queue-type": "classic"}),
		declared("orders.deferred.5000", map[string]any{"x-message-ttl": 5000.0}),
		declared("orders.deferred.5000.dead", nil), // a hold queue of a queue found is never a candidate
		declared("orders.dead.dead", nil),          // nor its dead-letter queue
		declared("plain", nil), declared("plain.dead", nil),
		declared("lonely", nil), // no dead-letter sibling: not a logical queue, not a near miss
		declared("odd", map[string]any{"x-max-length": 10.0}), declared("odd.dead", nil),
		undurable, declared("soft.dead", nil),
		quorum, declared("qq.dead", nil),
		declared("bd", nil), badDead,
		declared("prio", map[string]any{"x-max-priority": 300.0}), declared("prio.dead", nil),
		declared("str", map[string]any{"x-message-ttl": "5000"}), declared("str.dead", nil),
		declared("amq.x", nil), declared("amq.x.dead", nil),
	}
	found, near := LogicalQueues(queues, s, nil)
	wantFound := []Found{
		{Name: "orders", MessageTTLMs: new(int64(86400000)), MaxPriority: new(int64(10))},
		{Name: "plain"},
	}
	if !reflect.DeepEqual(found, wantFound) {
		t.Errorf("found:\n got %+v\nwant %+v", found, wantFound)
	}
	wantNear := []string{
		`amq.x: queue name "amq.x" starts with "amq.", which RabbitMQ reserves for its own queues`,
		`bd: its dead-letter queue "bd.dead": x-message-ttl is not declared by the backend`,
		`odd: x-max-length is not declared by the backend`,
		`prio: x-max-priority is 300; the backend declares an integer from 1 to 255`,
		`qq: its type is quorum; the backend declares classic queues`,
		`soft: durable is false; the backend declares true`,
		`str: x-message-ttl is "5000"; the backend declares an integer from 0 to 4294967295`,
	}
	var gotNear []string
	for _, n := range near {
		gotNear = append(gotNear, n.String())
	}
	if !reflect.DeepEqual(gotNear, wantNear) {
		t.Errorf("near misses:\n got %q\nwant %q", gotNear, wantNear)
	}
}

func TestLogicalQueues_matchAndSuffixes(t *testing.T) {
	s := Suffixes{Dead: "-dlq", Deferred: "-wait-"}
	queues := []NamedQueue{
		declared("a", nil), declared("a-dlq", nil), declared("a-wait-5000", nil), declared("a-wait-5000-dlq", nil),
		declared("b", nil), declared("b-dlq", nil),
		declared("odd", map[string]any{"x-expires": 1.0}), declared("odd-dlq", nil),
		declared("c", nil), declared("c.dead", nil), // the default suffix means nothing here
	}
	found, near := LogicalQueues(queues, s, func(n string) bool { return !strings.HasPrefix(n, "b") })
	if len(found) != 1 || found[0].Name != "a" {
		t.Errorf("found %+v, want only a", found)
	}
	if len(near) != 1 || near[0].Name != "odd" {
		t.Errorf("near misses %+v, want only odd", near)
	}
}

// A listing of many logical queues is sorted and needs no quadratic work.
func TestLogicalQueues_many(t *testing.T) {
	var queues []NamedQueue
	for i := 999; i >= 0; i-- {
		q := fmt.Sprintf("q%04d", i)
		queues = append(queues, declared(q, nil), declared(q+".dead", nil), declared(q+".deferred.1000", nil))
	}
	found, near := LogicalQueues(queues, DefaultSuffixes(), nil)
	if len(found) != 1000 || len(near) != 0 {
		t.Fatalf("found %d, near %d; want 1000, 0", len(found), len(near))
	}
	for i, f := range found {
		if want := fmt.Sprintf("q%04d", i); f.Name != want {
			t.Fatalf("found[%d] = %s, want %s", i, f.Name, want)
		}
	}
}

// Only a queue's own dead-letter and hold queues are left out of a listing:
// a name that merely looks like a hold queue of a queue found (a leading
// zero, a TTL past the longest hold, another queue's infix) is a candidate
// like any other, and so is a name of digits alone.
func TestLogicalQueues_holdLikeNames(t *testing.T) {
	t.Parallel()
	var queues []NamedQueue
	for _, n := range []string{
		"orders",
		"orders.deferred.5000",       // a hold queue of orders: never listed
		"orders.deferred.05",         // leading zero: not a hold queue
		"orders.deferred.2147483648", // past the longest hold
		"orders.deferred.5000x",
		"ordersdeferred.5000",
		"5", // digits alone
	} {
		queues = append(queues, declared(n, nil), declared(n+".dead", nil))
	}
	found, near := LogicalQueues(queues, DefaultSuffixes(), nil)
	var names []string
	for _, f := range found {
		names = append(names, f.Name)
	}
	want := "5 orders orders.deferred.05 orders.deferred.2147483648 orders.deferred.5000x ordersdeferred.5000"
	if got := strings.Join(names, " "); got != want || len(near) != 0 {
		t.Errorf("found %s, near misses %v; want %s and none", got, near, want)
	}
}
