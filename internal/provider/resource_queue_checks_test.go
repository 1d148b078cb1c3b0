package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

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
