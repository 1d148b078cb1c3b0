package provider

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// listOn runs the list resource queuey_queue with data and a config of vhost
// and name_regex ("" for null), resources included, and returns what it
// streamed.
func listOn(t *testing.T, data *providerData, vhost, nameRegex string, limit int64) []list.ListResult {
	t.Helper()
	ctx := context.Background()
	vals := map[string]tftypes.Value{"vhost": str(vhost), "name_regex": str(nameRegex)}
	maps.DeleteFunc(vals, func(_ string, v tftypes.Value) bool { return v.Equal(str("")) })
	r := &queueListResource{data: data}
	var sr list.ListResourceSchemaResponse
	r.ListResourceConfigSchema(ctx, list.ListResourceSchemaRequest{}, &sr)
	var resSchema resource.SchemaResponse
	NewQueueResource().Schema(ctx, resource.SchemaRequest{}, &resSchema)
	var idSchema resource.IdentitySchemaResponse
	(&queueResource{}).IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &idSchema)
	var stream list.ListResultsStream
	r.List(ctx, list.ListRequest{Config: configOf(t, tfsdk.Config{Schema: sr.Schema}, vals), ResourceSchema: resSchema.Schema,
		ResourceIdentitySchema: idSchema.IdentitySchema, IncludeResource: true, Limit: limit}, &stream)
	if stream.Results == nil {
		t.Fatal("List set no results")
	}
	return slices.Collect(stream.Results)
}

func TestQueueList_streamsWarningThenQueues(t *testing.T) {
	fake := brokertest.New(t)
	putIdle(fake, "orders.dead", "plain", "plain.dead", "odd.dead", "lonely", "orders.deferred.5000")
	orders := idle("orders")
	orders.Arguments = map[string]any{"x-message-ttl": 5000, "x-max-priority": 10}
	odd := idle("odd")
	odd.Arguments = map[string]any{"x-max-length": 10}
	fake.PutQueue("/", orders)
	fake.PutQueue("/", odd)

	results := listOn(t, fakeData(t, fake.URL), "", "", 1)
	if len(results) != 2 {
		t.Fatalf("streamed %d results, want the warning and 1 queue (limit 1): %+v", len(results), results)
	}
	warn := results[0].Diagnostics
	if len(warn) != 1 || warn.HasError() || !strings.Contains(warn[0].Detail(), "odd: x-max-length is not declared by the backend") {
		t.Fatalf("first result is not the near-miss warning: %+v", warn)
	}
	got := results[1]
	if got.Diagnostics.HasError() || got.DisplayName != "orders (vhost /)" {
		t.Fatalf("result: %q %v", got.DisplayName, got.Diagnostics)
	}
	var id queueIdentity
	if d := got.Identity.Get(context.Background(), &id); d.HasError() || id.Name.ValueString() != "orders" || id.Vhost.ValueString() != "/" {
		t.Fatalf("identity %+v %v", id, d)
	}
	var m queueModel
	if d := got.Resource.Get(context.Background(), &m); d.HasError() {
		t.Fatal(d)
	}
	if m.MessageTTL.ValueString() != "5s" || m.MaxPriority.ValueInt64() != 10 || m.ID.ValueString() != "%2F/orders" ||
		m.DeadQueue.ValueString() != "orders.dead" || m.ForceDestroy.ValueBool() ||
		m.ArgumentsJSON.ValueString() != `{"x-max-priority":10,"x-message-ttl":5000}` {
		t.Errorf("resource state is not what a read after import gives: %+v", m)
	}
	if n := len(fake.RequestsMatching("GET queues")); n != 1 {
		t.Errorf("the vhost was listed %d times, want once: %q", n, fake.Requests())
	}
}

func TestQueueList_regexAndVhostErrors(t *testing.T) {
	fake := brokertest.New(t)
	putIdle(fake, "a", "a.dead", "b", "b.dead")
	results := listOn(t, fakeData(t, fake.URL), "/", "^b", 100)
	if len(results) != 1 || results[0].DisplayName != "b (vhost /)" {
		t.Fatalf("name_regex ^b listed %+v", results)
	}
	for _, tc := range []struct{ vhost, regex, want string }{
		{"/", "b(", "name_regex must be a regular expression in RE2 syntax"},
		{"nope", "", `vhost "nope" does not exist`},
	} {
		results := listOn(t, fakeData(t, fake.URL), tc.vhost, tc.regex, 100)
		if len(results) != 1 || !results[0].Diagnostics.HasError() || !strings.Contains(results[0].Diagnostics[0].Detail(), tc.want) {
			t.Errorf("vhost %q regex %q: %+v, want an error saying %s", tc.vhost, tc.regex, results, tc.want)
		}
	}
	fake.AddVhost("qq", "quorum")
	results = listOn(t, fakeData(t, fake.URL), "qq", "", 100)
	if len(results) != 1 || !strings.Contains(results[0].Diagnostics[0].Detail(), "makes quorum queues by default") {
		t.Errorf("a quorum vhost: %+v", results)
	}
}

// With no limit (0) every logical queue is listed, and no warning comes
// first when nothing was left out; the warning's wording follows the
// number of queues it names.
func TestQueueList_noLimitAndWarningWording(t *testing.T) {
	t.Parallel()
	fake := brokertest.New(t)
	putIdle(fake, "a", "a.dead", "b", "b.dead", "c", "c.dead")
	results := listOn(t, fakeData(t, fake.URL), "", "", 0)
	var names []string
	for _, r := range results {
		names = append(names, r.DisplayName)
	}
	if got := strings.Join(names, "|"); got != "a (vhost /)|b (vhost /)|c (vhost /)" {
		t.Errorf("limit 0 listed %q, want a, b and c and no warning", got)
	}

	for _, tc := range []struct {
		odd  []string
		want string
	}{
		{[]string{"odd"}, `This queue has a dead-letter queue in vhost "/" but differs from what the queuey backend declares, so it is not listed`},
		{[]string{"odd", "odder"}, `These 2 queues have a dead-letter queue in vhost "/" but differ from what the queuey backend declares, so they are not listed`},
	} {
		fake := brokertest.New(t)
		for _, n := range tc.odd {
			q := idle(n)
			q.Arguments = map[string]any{"x-max-length": 10}
			fake.PutQueue("/", q)
			putIdle(fake, n+".dead")
		}
		results := listOn(t, fakeData(t, fake.URL), "", "", 0)
		if len(results) != 1 || len(results[0].Diagnostics) != 1 || !strings.Contains(results[0].Diagnostics[0].Detail(), tc.want) {
			t.Errorf("%d near misses: %+v, want one warning saying %q", len(tc.odd), results, tc.want)
		}
	}
}
