package provider

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// A re-declaration that keeps q's messages is refused, nothing declared, deleted or moved, when
// a policy of the holding queue or of q would expire, drop or delete them, whatever policy_check
// says; a harmless policy, or one that leaves both out, lets it go on.
func TestRedeclare_refusesLossyMove(t *testing.T) {
	t.Parallel()
	want := topology.Queue{Name: "orders", Args: topology.Arguments{topology.ArgMaxPriority: topology.Int(10)}}
	for _, tc := range []struct {
		name    string
		policy  brokertest.Policy
		refused []string
	}{
		{"ttl on everything", brokertest.Policy{Name: "ttl", Pattern: ".*", Definition: map[string]any{"message-ttl": 60000}},
			[]string{`policy "ttl"`, "orders.redeclaring", "message-ttl = 60000"}},
		{"length on q", brokertest.Policy{Name: "cap", Pattern: "^orders$", Definition: map[string]any{"max-length": 1}},
			[]string{`policy "cap"`, "max-length = 1", "orders, the main queue"}},
		{"expires on the holding queue", brokertest.Policy{Name: "idle", Pattern: `redeclaring$`, Definition: map[string]any{"expires": 600000}},
			[]string{`policy "idle"`, "expires = 600000"}},
		{"harmless", brokertest.Policy{Name: "v2", Pattern: ".*", Definition: map[string]any{"queue-version": 2}}, nil},
	} {
		fake := brokertest.New(t)
		fake.PutQueue("/", brokertest.Queue{Name: "orders", Durable: true, Messages: brokertest.Count(3)})
		fake.PutQueue("/", brokertest.Queue{Name: "orders.dead", Durable: true, Messages: brokertest.Count(0)})
		fake.SetPolicy("/", tc.policy)
		err := redeclare(context.Background(), fakeBrokerMover(t, fake), ordersTarget, want, false, true)
		var lossy *lossyMoveError
		if tc.refused == nil {
			if errors.As(err, &lossy) {
				t.Errorf("%s: refused: %v", tc.name, err)
			}
			continue
		}
		if !errors.As(err, &lossy) {
			t.Fatalf("%s: %v, want a refusal", tc.name, err)
		}
		for _, w := range append(tc.refused, "Nothing was moved") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v lacks %q", tc.name, err, w)
			}
		}
		if got := append(fake.RequestsMatching("PUT"), fake.RequestsMatching("DELETE")...); len(got) > 0 {
			t.Errorf("%s: a refusal changed the broker: %q", tc.name, got)
		}
		if failureSummary(err, "x") != "Move Refused: A Policy Would Lose Messages" {
			t.Errorf("%s: summary %q", tc.name, failureSummary(err, "x"))
		}
	}
}

// A redrive into a q whose policy would drop or expire the moved messages is refused before
// anything is tried over AMQP; the fake has no AMQP listener there, so getting past the check
// would read "Cannot Connect Over AMQP".
func TestRedrive_refusesLossyMove(t *testing.T) {
	s := brokertest.New(t)
	s.PutQueue("/", idle("orders"))
	s.PutQueue("/", idle("orders.dead"))
	q := map[string]tftypes.Value{"queue": str("orders")}
	for _, tc := range []struct {
		policy brokertest.Policy
		want   string
	}{
		{brokertest.Policy{Name: "cap", Pattern: "^orders$", Definition: map[string]any{"max-length": 1}},
			`Move Refused: A Policy Would Lose Messages: Nothing was moved: the redrive of orders.dead into orders`},
		{brokertest.Policy{Name: "cap", Pattern: "^orders$", Definition: map[string]any{"queue-version": 2}}, "Cannot Connect Over AMQP"},
	} {
		s.SetPolicy("/", tc.policy)
		d, _ := invokeDiags(t, NewRedriveDeadLettersAction(), fakeData(t, s.URL), q)
		if !strings.Contains(diagText(d), tc.want) {
			t.Errorf("%v:\n%s\nwant %q", tc.policy.Definition, diagText(d), tc.want)
		}
	}
}
