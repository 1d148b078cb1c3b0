package broker

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// policyBroker returns a fake broker with the vhost "v" holding a user policy and an operator
// policy, and a client of it.
func policyBroker(t *testing.T) (*brokertest.Server, *Client) {
	t.Helper()
	b := brokertest.New(t)
	b.AddVhost("v", "")
	b.SetPolicy("v", brokertest.Policy{Name: "limits", Pattern: ".*", ApplyTo: "queues", Priority: 5,
		Definition: map[string]any{"message-ttl": int64(4294967295), "max-length": int64(9007199254740993), "queue-mode": "lazy"}})
	b.SetPolicy("v", brokertest.Policy{Name: "a-first", Pattern: "^x", Definition: map[string]any{"expires": 1000}})
	b.SetOperatorPolicy("v", brokertest.Policy{Name: "ops", Pattern: "^q", ApplyTo: "classic_queues",
		Definition: map[string]any{"expires": 8000}})
	return b, fakeClient(t, Config{Endpoint: b.URL, Username: "u", Password: "p", RetryBudget: time.Minute, timing: fastTiming})
}

// Numbers decode exactly, beyond float64's integers too, into values topology.AsInt reads; an
// apply-to the broker leaves out is "all"; each listing is sorted by name.
func TestPolicies_decodes(t *testing.T) {
	t.Parallel()
	_, c := policyBroker(t)
	p, err := c.Policies(context.Background(), "v")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.User) != 2 || p.User[0].Name != "a-first" || p.User[1].Name != "limits" {
		t.Fatalf("user policies %+v, want a-first then limits", p.User)
	}
	if got := p.User[0].ApplyTo; got != "all" {
		t.Errorf("apply-to of a policy put without one: %q, want all", got)
	}
	limits := p.User[1]
	if limits.Pattern != ".*" || limits.ApplyTo != "queues" || limits.Priority != 5 {
		t.Errorf("limits: %+v", limits)
	}
	for key, want := range map[string]int64{"message-ttl": 4294967295, "max-length": 9007199254740993} {
		v := limits.Definition[key]
		if _, ok := v.(json.Number); !ok {
			t.Errorf("%s is a %T, want json.Number", key, v)
		}
		if got, ok := topology.AsInt(v); !ok || got != want {
			t.Errorf("%s: AsInt(%v) = %d, %v; want %d", key, v, got, ok, want)
		}
	}
	if got := limits.Definition["queue-mode"]; got != "lazy" {
		t.Errorf("queue-mode %v, want lazy", got)
	}
	want := []Policy{{Name: "ops", Pattern: "^q", ApplyTo: "classic_queues", Definition: map[string]any{"expires": json.Number("8000")}}}
	if !reflect.DeepEqual(p.Operator, want) {
		t.Errorf("operator policies %+v, want %+v", p.Operator, want)
	}
}

// A vhost without policies answers empty listings, not an error.
func TestPolicies_none(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	p, err := fakeClient(t, Config{Endpoint: b.URL, Username: "u", Password: "p"}).Policies(context.Background(), "/")
	if err != nil || len(p.User) != 0 || len(p.Operator) != 0 {
		t.Fatalf("Policies = %+v, %v; want none", p, err)
	}
}

// N callers at once, and any after them, share one request of each listing per vhost.
func TestPolicies_readOncePerVhost(t *testing.T) {
	t.Parallel()
	b, c := policyBroker(t)
	b.AddVhost("w", "")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vhost := []string{"v", "w"}[i%2]
			if _, err := c.Policies(context.Background(), vhost); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if _, err := c.Policies(context.Background(), "v"); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"GET policies v", "GET operator-policies v", "GET policies w", "GET operator-policies w"} {
		if got := len(b.RequestsMatching(prefix)); got != 1 {
			t.Errorf("%d requests %q, want 1", got, prefix)
		}
	}
}

// A transient answer is retried like every read's.
func TestPolicies_retriesTransient(t *testing.T) {
	t.Parallel()
	b, c := policyBroker(t)
	b.Script(brokertest.Path("policies/v"), brokertest.Reply(503, ``))
	p, err := c.Policies(context.Background(), "v")
	if err != nil || len(p.User) != 2 {
		t.Fatalf("Policies = %+v, %v; want both user policies", p, err)
	}
	if got := len(b.RequestsMatching("GET policies v")); got != 2 {
		t.Errorf("%d requests, want 2 (the 503, then the answer)", got)
	}
}

// A failure that is not a refusal is not kept: the next call asks again.
func TestPolicies_failureNotKept(t *testing.T) {
	t.Parallel()
	b, _ := policyBroker(t)
	c := fakeClient(t, Config{Endpoint: b.URL, Username: "u", Password: "p"}) // no retries
	b.Script(brokertest.Path("policies/v"), brokertest.Reply(503, ``))
	if _, err := c.Policies(context.Background(), "v"); err == nil || errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrPartial) {
		t.Fatalf("err %v, want a failure that is neither a refusal nor partial", err)
	}
	if p, err := c.Policies(context.Background(), "v"); err != nil || len(p.User) != 2 {
		t.Fatalf("second call: %+v, %v; want the policies", p, err)
	}
}

// A missing vhost is ErrNotFound, and no refusal.
func TestPolicies_missingVhost(t *testing.T) {
	t.Parallel()
	_, c := policyBroker(t)
	_, err := c.Policies(context.Background(), "none")
	if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrUnauthorized) {
		t.Fatalf("err %v, want ErrNotFound", err)
	}
}

// Refusals are ErrUnauthorized, told by errors.Is alone: both listings refused (3.10 and 4.0's 401,
// 4.3's 404 for a vhost the user cannot access), or one of them (a PartialError beside the other's
// answer). A refusal is kept: the next call asks nothing.
func TestPolicies_refused(t *testing.T) {
	t.Parallel()
	notVisible := func(b *brokertest.Server) {
		// 4.3: a management user reads no single vhost, and the vhost is not among its own.
		// Each listing's 404 is checked on its own.
		nonAdmin := brokertest.Reply(401, brokertest.NotAdministrator)
		b.Script(brokertest.Path("vhosts/v"), nonAdmin, nonAdmin)
		b.Script(brokertest.Path("vhosts"), brokertest.Reply(200, `[]`), brokertest.Reply(200, `[]`))
	}
	for _, tc := range []struct {
		name            string
		user, operator  *brokertest.Answer
		arrange         func(*brokertest.Server)
		partial         bool
		wantUser, wantO int
	}{
		{name: "both 401", user: new(brokertest.Reply(401, brokertest.NotVhostUser)), operator: new(brokertest.Reply(401, brokertest.NotVhostUser))},
		{name: "both 404 on 4.3", user: new(brokertest.Reply(404, brokertest.NotFound43)), operator: new(brokertest.Reply(404, brokertest.NotFound43)), arrange: notVisible},
		{name: "operator 403", operator: new(brokertest.Reply(403, `{"error":"forbidden","reason":"Access refused."}`)), partial: true, wantUser: 2},
		{name: "user 403", user: new(brokertest.Reply(403, `{"error":"forbidden","reason":"Access refused."}`)), partial: true, wantO: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, c := policyBroker(t)
			if tc.arrange != nil {
				tc.arrange(b)
			}
			for path, a := range map[string]*brokertest.Answer{"policies/v": tc.user, "operator-policies/v": tc.operator} {
				if a != nil {
					b.Script(brokertest.Path(path), *a)
				}
			}
			p, err := c.Policies(context.Background(), "v")
			var e *Error
			if !errors.Is(err, ErrUnauthorized) || !errors.As(err, &e) || e.Status == 0 {
				t.Fatalf("err %v, want an *Error of kind ErrUnauthorized", err)
			}
			if errors.Is(err, ErrPartial) != tc.partial {
				t.Errorf("errors.Is(err, ErrPartial) = %v, want %v: %v", !tc.partial, tc.partial, err)
			}
			if len(p.User) != tc.wantUser || len(p.Operator) != tc.wantO {
				t.Errorf("policies %+v, want %d user and %d operator", p, tc.wantUser, tc.wantO)
			}
			before := len(b.Requests())
			if _, again := c.Policies(context.Background(), "v"); !reflect.DeepEqual(again, err) {
				t.Errorf("second call: %v, want the kept %v", again, err)
			}
			if got := len(b.Requests()); got != before {
				t.Errorf("the second call sent %d requests, want none", got-before)
			}
		})
	}
}
