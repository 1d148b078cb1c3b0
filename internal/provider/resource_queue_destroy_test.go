package provider

import (
	"strings"
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
