package provider

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// noteCheckAge is the age a listing may have in TestNotedListing's stand-in
// of the broker's rule (the rule itself: internal/broker's TestCountsAsRecent),
// shorter than the client's own so that both sides of it can be tested.
const noteCheckAge = 2 * time.Second

// A destroy takes the plan's listing: it lists nothing, still deletes the
// hold queues that listing found, in order, and refuses on RabbitMQ 3.10
// (no count in a single GET) for what that listing counted, in a hold queue
// as in q.dead.
func TestDestroyTakesThePlansListing(t *testing.T) {
	t.Parallel()
	for _, busy := range []string{"", "orders.dead", "orders.deferred.1000"} {
		s := brokertest.New(t)
		s.NoSingleQueueCounts()
		putIdle(s, "orders", "orders.dead", "orders.deferred.1000", "orders2.deferred.1000")
		if busy != "" {
			q := idle(busy)
			q.Messages = brokertest.Count(2)
			s.PutQueue("/", q)
		}
		// The plan notes what its listing (a client of its own) has of orders.
		private := memPrivate{}
		var diags diag.Diagnostics
		warnIfBusy(context.Background(), fakeData(t, s.URL), replaceModel("5s", false), "destroyed", false, private, &diags)
		if diags.HasError() {
			t.Fatal(diags)
		}
		listings := s.Listings("/")

		c := fakeBrokerClient(t, s) // a client of its own, as the destroy's provider process has
		target := ordersTarget
		var ok bool
		if target.noted, ok = notedListing(context.Background(), private, target, c.CountsAsRecent); !ok {
			t.Fatal("a plan's listing of a moment ago was not taken")
		}
		err := destroyTopology(context.Background(), c, target, false)
		if n := s.Listings("/") - listings; n != 0 {
			t.Errorf("busy %q: the destroy listed the vhost %d times after the plan had", busy, n)
		}
		switch {
		case busy == "" && err != nil:
			t.Errorf("idle: %v", err)
		case busy == "" && deletedNames(s) != "orders.deferred.1000 orders orders.dead":
			t.Errorf("idle: deleted %q", deletedNames(s))
		case busy != "" && (err == nil || !strings.Contains(err.Error(), busy+": 2 messages")):
			t.Errorf("%s busy: got %v, want a refusal for its 2 messages", busy, err)
		case busy != "" && deletedNames(s) != "":
			t.Errorf("%s busy: deleted %q", busy, deletedNames(s))
		}
	}
}

// The plan's listing is taken only by the destroy of the same queue, just
// inside CheckAge of its request's start, and before the destroy's process
// wrote anything but a queue delete; otherwise the destroy lists.
func TestNotedListing(t *testing.T) {
	t.Parallel()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	note := func(of ownedQueues, host string, age time.Duration) memPrivate {
		b, err := json.Marshal(listingNote{Of: of.noteOf(), Host: host, Began: time.Now().Add(-age), Queues: map[string]*int64{"orders": brokertest.Count(0)}})
		if err != nil {
			t.Fatal(err)
		}
		return memPrivate{listingKey: b}
	}
	other := ordersTarget
	other.vhost = "v2"
	declare := func(c *broker.Client) error { return c.DeclareQueue(context.Background(), "/", "x", nil) }
	purge := func(c *broker.Client) error {
		// A purge is a write from its start, even one that never connects: the mover marks it.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _ = moverOf(t, c, "").Purge(ctx, "/", "x")
		return nil
	}
	deleteOne := func(c *broker.Client) error { return c.DeleteQueue(context.Background(), "/", "x", true) }
	const none = time.Duration(-1 << 62)
	for _, tc := range []struct {
		name   string
		of     ownedQueues
		host   string
		age    time.Duration // of the note when read (none: no note)
		before func(*broker.Client) error
		want   bool
	}{
		{"a moment old", ordersTarget, host, 0, nil, true},
		{"just inside CheckAge", ordersTarget, host, noteCheckAge - 300*time.Millisecond, nil, true},
		{"just outside CheckAge", ordersTarget, host, noteCheckAge + 300*time.Millisecond, nil, false},
		{"from a clock ahead", ordersTarget, host, -time.Minute, nil, false},
		{"from another machine", ordersTarget, host + ".elsewhere", 0, nil, false},
		{"of the same name in another vhost", other, host, 0, nil, false},
		{"after a declaration", ordersTarget, host, 0, declare, false},
		{"after a purge", ordersTarget, host, 0, purge, false},
		{"after a queue delete", ordersTarget, host, 0, deleteOne, true},
		{"none", ordersTarget, host, none, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := brokertest.New(t)
			putIdle(s, "x")
			c := fakeBrokerClient(t, s) // a client of its own, as the destroy's provider process has
			private := memPrivate{}
			if tc.age != none {
				private = note(tc.of, tc.host, tc.age)
			}
			if tc.before != nil {
				time.Sleep(10 * time.Millisecond) // the write comes after the listing began
				if err := tc.before(c); err != nil {
					t.Fatal(err)
				}
			}
			// The client's own rule (no write since the listing began), with an age
			// limit of noteCheckAge: the note's Began must reach it unchanged.
			recent := func(began time.Time) bool {
				age := time.Since(began)
				return c.CountsAsRecent(began) && age >= 0 && age <= noteCheckAge
			}
			listing, ok := notedListing(context.Background(), private, ordersTarget, recent)
			if ok != tc.want {
				t.Fatalf("taken = %v, want %v", ok, tc.want)
			}
			if ok && (listing["orders"].Messages == nil || listing["orders"].Vhost != "/") {
				t.Errorf("listing = %+v", listing)
			}
		})
	}
	if _, ok := notedListing(context.Background(), memPrivate{listingKey: []byte("{")}, ordersTarget, fakeBrokerClient(t, brokertest.New(t)).CountsAsRecent); ok {
		t.Error("an unreadable note was taken")
	}
}

// noteListing keeps only the queues of the topology, with their counts
// (null where the listing had none), and a nil listing removes the note.
func TestNoteListing(t *testing.T) {
	t.Parallel()
	private := memPrivate{}
	listing := map[string]broker.Queue{
		"orders":               {Name: "orders", Messages: brokertest.Count(0)},
		"orders.deferred.1000": {Name: "orders.deferred.1000"},
		"orders2":              {Name: "orders2", Messages: brokertest.Count(3)},
	}
	began := time.Date(2026, 12, 5, 1, 2, 3, 4, time.UTC)
	noteListing(context.Background(), private, ordersTarget, listing, began)
	var got listingNote
	if err := json.Unmarshal(private[listingKey], &got); err != nil {
		t.Fatal(err)
	}
	if n := got.Queues["orders"]; len(got.Queues) != 2 || n == nil || *n != 0 || got.Queues["orders.deferred.1000"] != nil ||
		!got.Began.Equal(began) || got.Of != ordersTarget.noteOf() {
		t.Errorf("note = %s", private[listingKey])
	}
	noteListing(context.Background(), private, ordersTarget, nil, time.Time{})
	if _, ok := private[listingKey]; ok {
		t.Errorf("a nil listing left the note %s", private[listingKey])
	}
}

// Through the CLI: a terraform destroy lists the vhost with counts once, in
// its plan, and its destroy (a provider configured anew) takes that
// listing, hold queue included.
func TestQueue_destroyListsOnce(t *testing.T) {
	s := brokertest.New(t)
	unitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		Steps: []resource.TestStep{{
			Config: fakeProviderConfig(s, ""),
			Check: func(*terraform.State) error {
				putIdle(s, "orders.deferred.1000")
				return nil
			},
		}},
	})
	if got := strings.Join(s.QueueNames("/"), " "); got != "" {
		t.Errorf("queues left after destroy: %s", got)
	}
	if got := s.RequestsMatching("GET queues / ?enable_queue_totals"); len(got) != 1 {
		t.Errorf("listings with counts: %q, want the destroy plan's only", got)
	}
}
