package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// Unit tests of the resource against brokertest, a fake management API: no
// broker, no TF_ACC.

func fakeBrokerClient(t *testing.T, s *brokertest.Server) *broker.Client {
	t.Helper()
	c, err := broker.New(broker.Config{Endpoint: s.URL, Username: "u", Password: "p", RetryBudget: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
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

var ordersTarget = destroyTarget{vhost: "/", queue: "orders", suffixes: topology.DefaultSuffixes()}

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

// fakeProviderConfig points the provider at the fake broker.
func fakeProviderConfig(s *brokertest.Server, body string) string {
	return fmt.Sprintf(`
provider "queuey" {
  endpoint     = %q
  username     = "u"
  password     = "p"
  retry_budget = "0s"
}

resource "queuey_queue" "test" {
  name = "orders"
%s
}
`, s.URL, body)
}

// Drift found by Read shows in the plan: arguments_json goes from the
// broker's table (flags included) to the computed one, and the queue is
// replaced; after the apply, state holds the computed table again.
func TestQueue_driftReplaces(t *testing.T) {
	s := brokertest.New(t)
	cfg := fakeProviderConfig(s, `  message_ttl = "5s"`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("arguments_json"), knownvalue.StringExact(`{"x-message-ttl":5000}`)),
				},
			},
			{
				PreConfig: func() {
					s.PutQueue("/", brokertest.Queue{Name: "orders", Durable: true, AutoDelete: true, Messages: brokertest.Count(0),
						Arguments: map[string]any{"x-message-ttl": 5000, "x-max-length": 10}})
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("queuey_queue.test", plancheck.ResourceActionReplace),
					expectArgumentsChange(`{"auto_delete":true,"x-max-length":10,"x-message-ttl":5000}`, `{"x-message-ttl":5000}`),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("queuey_queue.test", tfjsonpath.New("arguments_json"), knownvalue.StringExact(`{"x-message-ttl":5000}`)),
				},
			},
			{
				Config:           cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
	q, ok := s.Queue("/", "orders")
	if ok {
		t.Errorf("orders left after destroy: %+v", q)
	}
}

// A queue that exists with other settings is refused at create, each
// difference named with both values, names sorted, and nothing declared.
func TestQueue_adoptRefusedNamesEachDifference(t *testing.T) {
	s := brokertest.New(t)
	s.PutQueue("/", brokertest.Queue{Name: "orders", Durable: false, Messages: brokertest.Count(0),
		Arguments: map[string]any{"x-message-ttl": 1000, "x-max-length": 5}})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: fakeProviderConfig(s, `  message_ttl = "2s"`),
			ExpectError: regexp.MustCompile(`(?s)Queue\s+Exists\s+With\s+Different\s+Settings.*durable:\s+broker\s+has\s+false,\s+wanted\s+true.*` +
				`x-max-length:\s+broker\s+has\s+5,\s+wanted\s+absent.*x-message-ttl:\s+broker\s+has\s+1000,\s+wanted\s+2000.*Nothing\s+was\s+changed`),
		}},
	})
	if d := s.RequestsMatching("PUT"); len(d) > 0 {
		t.Errorf("a refused create declared %q", d)
	}
}

// Errors that list names list them in a stable order.
func TestSorted(t *testing.T) {
	t.Parallel()
	in := []string{"retry_granularity", "dead_suffix", "deferred_suffix"}
	if got := strings.Join(sorted(in), ","); got != "dead_suffix,deferred_suffix,retry_granularity" {
		t.Errorf("sorted = %s", got)
	}
	if in[0] != "retry_granularity" {
		t.Error("sorted changed its argument")
	}
}

// A vhost that makes quorum queues by default is refused before anything is
// declared; a vhost that does not exist is named as missing.
func TestQueue_vhostChecked(t *testing.T) {
	s := brokertest.New(t)
	s.AddVhost("quorum-default", "quorum")
	for vhost, want := range map[string]string{
		"quorum-default": `(?s)vhost\s+"quorum-default"\s+makes\s+quorum\s+queues\s+by\s+default`,
		"missing":        `(?s)vhost\s+"missing"\s+does\s+not\s+exist`,
	} {
		resource.UnitTest(t, resource.TestCase{
			ProtoV6ProviderFactories: testProviderFactories,
			Steps: []resource.TestStep{{
				Config:      fakeProviderConfig(s, fmt.Sprintf("  vhost = %q", vhost)),
				ExpectError: regexp.MustCompile(want),
			}},
		})
	}
	if d := s.RequestsMatching("PUT"); len(d) > 0 {
		t.Errorf("declared %q in a vhost that was refused", d)
	}
}
