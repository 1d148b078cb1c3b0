package provider

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// The broker client declares the flags the backend declares (topology.Declared), which it holds
// as constants of its own so that it imports no rule of the topology.
func TestDeclaredFlags(t *testing.T) {
	s := brokertest.New(t)
	if err := declare(context.Background(), fakeBrokerClient(t, s), "/", topology.Queue{Name: "orders", Args: topology.Arguments{}}); err != nil {
		t.Fatal(err)
	}
	q, _ := s.Queue("/", "orders")
	if got := (topology.Flags{Durable: q.Durable, AutoDelete: q.AutoDelete, Exclusive: q.Exclusive}); got != topology.Declared {
		t.Errorf("declared with flags %+v, the backend declares %+v", got, topology.Declared)
	}
}

// checkVhost accepts a vhost that makes classic queues and refuses one that
// is missing or makes other queues, saying where that default comes from:
// the vhost's own setting here (the node sets none).
func TestCheckVhost(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.AddVhost("quorum-default", "quorum")
	s.AddVhost("classic-default", "classic")
	c := fakeBrokerClient(t, s)
	for _, tt := range []struct {
		vhost, want, notWant string
	}{
		{"/", "", ""},
		{"classic-default", "", ""},
		{"missing", `vhost "missing" does not exist at ` + c.Endpoint(), ""},
		{"quorum-default", `vhost "quorum-default" makes quorum queues by default (its default_queue_type), but`, "from the node's"},
	} {
		err := checkVhost(context.Background(), c, tt.vhost)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("vhost %q: %v", tt.vhost, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("vhost %q: %v, want %q", tt.vhost, err, tt.want)
		case tt.notWant != "" && strings.Contains(err.Error(), tt.notWant):
			t.Errorf("vhost %q: %v, which should not say %q", tt.vhost, err, tt.notWant)
		}
	}
}

// A vhost that makes quorum queues because the node's default_queue_type
// says so (RabbitMQ 4.x reports the node's for a vhost that sets none, and
// a vhost created before the setting reports none, as 3.10 does) is refused
// naming rabbitmq.conf.
func TestCheckVhost_nodeDefault(t *testing.T) {
	t.Parallel()
	s := brokertest.New(t)
	s.AnswerAs(brokertest.V310)
	s.AddVhost("reports-quorum", "quorum")
	s.AddVhost("reports-none", "")
	s.AddVhost("own-stream", "stream")
	s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/api/overview" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"default_queue_type":"quorum"}`))
		return true
	})
	c := fakeBrokerClient(t, s)
	const fromNode = "its default_queue_type, which a vhost that sets none takes from the node's default_queue_type in rabbitmq.conf"
	for vhost, wantFromNode := range map[string]bool{"reports-quorum": true, "reports-none": true, "own-stream": false} {
		err := checkVhost(context.Background(), c, vhost)
		if err == nil || !strings.Contains(err.Error(), "makes") || strings.Contains(err.Error(), fromNode) != wantFromNode {
			t.Errorf("vhost %q: %v; want a refusal that names rabbitmq.conf: %v", vhost, err, wantFromNode)
		}
	}
}
