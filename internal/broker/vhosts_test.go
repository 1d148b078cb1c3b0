package broker

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

func TestReads_vhostCheckedOncePerClient(t *testing.T) {
	b, c := newReadsBroker(t)
	ctx := context.Background()
	check := func() {
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := c.GetVhost(ctx, "v")
				if err != nil || !v.IsClassic() {
					t.Errorf("GetVhost: %+v, %v", v, err)
				}
			}()
		}
		wg.Wait()
	}
	check()
	// Queue writes do not change a vhost.
	if err := c.DeclareQueue(ctx, "v", "q", nil); err != nil {
		t.Fatal(err)
	}
	check()
	if n := len(b.RequestsMatching("GET vhosts v")); n != 1 {
		t.Fatalf("16 vhost checks sent %d requests, want 1", n)
	}
}

func TestConfirmNotFound(t *testing.T) {
	for _, tc := range []struct {
		name     string
		vb       versionBroker
		wantKind error
		want     Cause
	}{
		{
			name: "administrator, vhost gone",
			vb: versionBroker{
				"queues/v": answer{404, brokertest.ObjectNotFound},
				"vhosts/v": answer{404, brokertest.ObjectNotFound},
			},
			wantKind: ErrNotFound,
		},
		{
			name: "management user, vhost gone (3.10/4.0) or not accessible (4.3)",
			vb: versionBroker{
				"queues/v": answer{404, brokertest.NotFound43},
				"vhosts/v": answer{401, brokertest.NotAdministrator},
				"vhosts":   answer{200, `[{"name":"other"}]`},
			},
			wantKind: ErrUnauthorized,
			want:     CauseVhostNotVisible,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := tc.vb.client(t)
			_, err := queuesOf(c, context.Background(), "v", Declared, Kept)
			if !errors.Is(err, tc.wantKind) {
				t.Fatalf("got %v, want %v", err, tc.wantKind)
			}
			var e *Error
			if errors.As(err, &e); e.Cause != tc.want || (tc.want == CauseVhostNotVisible && (e.Vhost != "v" || e.User != "u")) {
				t.Errorf("got %#v, want cause %d naming vhost \"v\" and user \"u\"", err, tc.want)
			}
		})
	}
}

func TestGetVhost_nodeDefaultQueueType(t *testing.T) {
	for _, tc := range []struct {
		name         string
		vhost        string
		overview     string
		wantType     string
		wantFromNode bool
	}{
		{"3.10: undefined, no node setting", `{"name":"v","default_queue_type":"` + brokertest.NoDefaultQueueType310 + `"}`, brokertest.Overview310, "", false},
		{"4.x: the vhost's own", `{"name":"v","default_queue_type":"classic"}`, ``, "classic", false},
		{"vhost sets none, node quorum", `{"name":"v","metadata":{}}`, `{"default_queue_type":"quorum"}`, "quorum", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vb := versionBroker{"vhosts/v": answer{200, tc.vhost}}
			if tc.overview != "" {
				vb["overview"] = answer{200, tc.overview}
			}
			c, _ := vb.client(t)
			v, err := c.GetVhost(context.Background(), "v")
			if err != nil {
				t.Fatal(err)
			}
			if v.DefaultQueueType != tc.wantType || v.FromNode != tc.wantFromNode {
				t.Errorf("got %+v, want type %q from node %v", v, tc.wantType, tc.wantFromNode)
			}
			if v.IsClassic() != (tc.wantType == "" || tc.wantType == "classic") {
				t.Errorf("IsClassic() = %v for %+v", v.IsClassic(), v)
			}
		})
	}
}
