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

// A refresh reads q and q.dead alone, never the vhost's listing; a q that is
// not found is gone only when the 404 can be trusted: RabbitMQ 4.3 answers a
// user who may not see the vhost 404 too, and then the refresh fails instead
// of dropping the queue from the state.
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
		got, err := readTopology(context.Background(), fakeBrokerClient(t, fake), "v", "orders", topology.DefaultSuffixes())
		switch {
		case tc.wantErr != nil:
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("%s: got %+v, %v; want %v", tc.name, got, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case got.gone != tc.wantGone || got.deadOK != tc.wantDead:
			t.Errorf("%s: gone %v, q.dead found %v; want %v, %v", tc.name, got.gone, got.deadOK, tc.wantGone, tc.wantDead)
		}
		if n := fake.Listings("v"); n != 0 {
			t.Errorf("%s: a refresh listed the vhost %d times", tc.name, n)
		}
	}
}
