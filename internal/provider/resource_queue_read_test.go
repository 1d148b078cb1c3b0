package provider

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// A refresh reads q and q.dead alone until the process's listing of the
// vhost has answered, then from the listing, looking up alone only what it
// lacks; either way it finds the same. A q that is not found is gone only
// when the 404 can be trusted: RabbitMQ 4.3 answers a user who may not see the
// vhost 404 too, and then the refresh fails instead of dropping the queue
// from the state.
func TestReadTopology(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		queues   []string
		vhost    func(w http.ResponseWriter, r *http.Request) bool // answers GET vhosts…, or nil
		wantGone bool
		wantDead bool
		wantErr  error
	}{
		{name: "both there", queues: []string{"orders", "orders.dead"}, wantDead: true},
		{name: "q.dead missing", queues: []string{"orders"}},
		{name: "q gone, vhost there", queues: []string{"orders.dead"}, wantGone: true},
		{name: "vhost gone (administrator)", vhost: func(w http.ResponseWriter, r *http.Request) bool {
			brokertest.ErrorBody(w, http.StatusNotFound, "Object Not Found", "Not Found")
			return true
		}, wantGone: true},
		{name: "vhost not visible (4.3 management user)", vhost: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.EscapedPath() == "/api/vhosts/v" {
				brokertest.ErrorBody(w, http.StatusUnauthorized, "not_authorised", "Not administrator user")
			} else {
				_, _ = w.Write([]byte(`[{"name":"other"}]`))
			}
			return true
		}, wantErr: broker.ErrUnauthorized},
	} {
		fake := brokertest.New(t)
		fake.AddVhost("v", "")
		for _, name := range tc.queues {
			fake.PutQueue("v", idle(name))
		}
		if tc.vhost != nil {
			fake.RemoveVhost("v")
			fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodGet || len(r.URL.EscapedPath()) < 11 || r.URL.EscapedPath()[:11] != "/api/vhosts" {
					return false
				}
				return tc.vhost(w, r)
			})
		}
		c := fakeBrokerClient(t, fake)
		for _, round := range []string{"before the listing", "from the listing"} {
			if round == "from the listing" && !listed(c, "v") {
				continue // a vhost the listing cannot read: every refresh looks up alone
			}
			gets := singleGets(fake)
			got, err := readTopology(context.Background(), c, "v", "orders", topology.DefaultSuffixes())
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("%s, %s: got %+v, %v; want %v", tc.name, round, got, err, tc.wantErr)
				}
			case err != nil:
				t.Errorf("%s, %s: %v", tc.name, round, err)
			case got.gone != tc.wantGone || got.deadOK != tc.wantDead:
				t.Errorf("%s, %s: gone %v, q.dead found %v; want %v, %v", tc.name, round, got.gone, got.deadOK, tc.wantGone, tc.wantDead)
			}
			wantGets := 3 // q, q.dead and the holding queue, each alone
			if round == "from the listing" {
				// What the listing lacks of q and q.dead; the holding queue
				// it lacks is absent.
				wantGets = 2 - len(tc.queues)
			}
			if n := singleGets(fake) - gets; n != wantGets {
				t.Errorf("%s, %s: %d GETs of single queues, want %d", tc.name, round, n, wantGets)
			}
		}
	}
}

// listed waits for c's listing of vhost to answer (one in flight, else a new one), and reports
// whether it answered with the queues.
func listed(c *broker.Client, vhost string) bool {
	_, err := c.ListQueues(context.Background(), vhost, broker.Declared, broker.Kept)
	return err == nil
}

// singleGets counts the GETs of single queues of vhost v the fake received:
// those of the vhost's queues that are not a listing (whose query comes next).
func singleGets(fake *brokertest.Server) int {
	return len(fake.RequestsMatching("GET queues v ")) - len(fake.RequestsMatching("GET queues v ?"))
}

// A refresh finds the holding queue of an interrupted change with its count:
// from its own GET (4.x) or, where that lacks it (3.10), from a listing with
// counts; none when it does not exist.
func TestReadTopology_holdingQueue(t *testing.T) {
	t.Parallel()
	for _, single := range []bool{true, false} {
		fake := brokertest.New(t)
		if !single {
			fake.NoSingleQueueCounts()
		}
		putIdle(fake, "orders", "orders.dead")
		c := fakeBrokerClient(t, fake)
		got, err := readTopology(context.Background(), c, "/", "orders", topology.DefaultSuffixes())
		if err != nil || got.holding != nil {
			t.Fatalf("without a holding queue: %v, %v", got.holding, err)
		}
		fake.PutQueue("/", brokertest.Queue{Name: "orders.redeclaring", Durable: true, Messages: brokertest.Count(1204)})
		// A new process, as the plan after an interrupted apply.
		got, err = readTopology(context.Background(), fakeBrokerClient(t, fake), "/", "orders", topology.DefaultSuffixes())
		if err != nil || got.holding == nil || *got.holding != 1204 {
			t.Errorf("single counts %v: holding %v, %v; want 1204", single, got.holding, err)
		}
	}
}
