package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/queuey/terraform-provider-queuey/internal/broker"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// The plan's warning of a change gives q's counts and what the apply will do,
// by the rule, from what the listing shows.
func TestRedeclareWarning(t *testing.T) {
	t.Parallel()
	plan := replaceModel("10s", false)
	plan.ArgumentsJSON = jsontypes.NewNormalizedValue(`{"x-message-ttl":10000}`)
	queues := func(messages int64, consumers int64, hold int64) map[string]broker.Queue {
		n := brokertest.Count
		return map[string]broker.Queue{
			"orders":                {Name: "orders", Messages: n(messages), Consumers: n(consumers)},
			"orders.dead":           {Name: "orders.dead", Messages: n(5), Consumers: n(0)},
			"orders.deferred.30000": {Name: "orders.deferred.30000", Messages: n(hold), Consumers: n(0)},
		}
	}
	for _, tc := range []struct {
		name        string
		queues      map[string]broker.Queue
		force, keep bool
		want        string
	}{
		{"messages", queues(1204, 0, 0), false, false, "It holds 1204 messages and has 0 consumers. The apply will refuse and change nothing " +
			"while it holds messages, unless keep_messages_on_change = true (moves them to orders.redeclaring and back)"},
		{"keep", queues(1204, 0, 0), false, true, "keep_messages_on_change = true: the apply moves its messages to orders.redeclaring and back"},
		{"force", queues(1204, 0, 0), true, false, "force_destroy = true: the apply deletes it without checks, and ANY MESSAGE IT HOLDS WILL BE LOST"},
		{"consumer", queues(0, 1, 0), false, true, "has 1 consumer. The apply will refuse and change nothing while it has a consumer"},
		{"hold queue", queues(0, 0, 3), false, true, "while these hold queues hold messages (or set force_destroy = true):\n  - orders.deferred.30000: 3 messages"},
		{"empty", queues(0, 0, 0), false, false, "It is empty: the apply deletes it (only if still empty and unused) and declares it anew"},
		{"q not listed", map[string]broker.Queue{}, false, false, "It is empty"},
	} {
		plan.ForceDestroy, plan.KeepMessages = types.BoolValue(tc.force), types.BoolValue(tc.keep)
		got := redeclareWarning(ordersTarget, tc.queues, plan)
		if !strings.Contains(got, tc.want) || !strings.Contains(got, `with the arguments {"x-message-ttl":10000}`) {
			t.Errorf("%s: %q lacks %q", tc.name, got, tc.want)
		}
	}
}

// The plan warns of a change that declares q again, and of an interrupted
// change's holding queue that state records, each from one listing; it asks
// the broker nothing when neither applies, when the wanted table is unknown
// until apply, or when the broker settings are unknown or unset.
func TestWarnIfRedeclaring(t *testing.T) {
	t.Parallel()
	same, changed := replaceModel("5s", false), replaceModel("10s", false)
	unknown := same
	unknown.ArgumentsJSON = jsontypes.NewNormalizedUnknown()
	interrupted := same
	interrupted.Redeclaring = types.Int64Value(4)
	for _, tc := range []struct {
		name          string
		state, plan   queueModel
		brokerUnknown bool
		noEndpoint    bool
		want          []string // the warnings' summaries
	}{
		{name: "same table", state: same, plan: same},
		{name: "table unknown until apply", state: same, plan: unknown},
		{name: "new table", state: same, plan: changed, want: []string{"Queue Will Be Declared Again"}},
		{name: "interrupted change", state: interrupted, plan: same, want: []string{"Interrupted Change Found"}},
		{name: "new table, interrupted change", state: interrupted, plan: changed,
			want: []string{"Interrupted Change Found", "Queue Will Be Declared Again"}},
		{name: "broker settings unknown", state: interrupted, plan: changed, brokerUnknown: true},
		{name: "no endpoint", state: interrupted, plan: changed, noEndpoint: true},
	} {
		fake := brokertest.New(t)
		putIdle(fake, "orders", "orders.dead")
		if !tc.state.Redeclaring.IsNull() {
			fake.PutQueue("/", brokertest.Queue{Name: "orders.redeclaring", Durable: true, Messages: brokertest.Count(4)})
		}
		data := &providerData{suffixes: topology.DefaultSuffixes(), brokerUnknown: tc.brokerUnknown, endpointSet: !tc.noEndpoint,
			brokerConfig: broker.Config{Endpoint: fake.URL, Username: "u", Password: "p", RetryBudget: -1}}
		var diags diag.Diagnostics
		warnIfRedeclaring(context.Background(), data, tc.state, tc.plan, &diags)
		var got []string
		for _, d := range diags {
			got = append(got, d.Summary())
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || diags.HasError() {
			t.Errorf("%s: %q, want warnings %q", tc.name, got, tc.want)
		}
		if n := len(fake.Requests()); (n > 0) != (len(tc.want) > 0) {
			t.Errorf("%s: %d requests to the broker %q", tc.name, n, fake.Requests())
		}
	}
}
