package broker

import (
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// versionBroker maps a path (below /api/) to the answer a RabbitMQ version
// gives there. The tests' answers are those recorded from RabbitMQ 3.10.8,
// 4.0.5 and 4.3.6 (brokertest/versions.go).
type versionBroker map[string]answer

type answer = struct {
	status int
	body   string
}

// client starts a fake broker that answers the paths of vb as given, once
// each (the client, without retries, asks each once), and returns a client
// of it.
func (vb versionBroker) client(t *testing.T) (*Client, *brokertest.Server) {
	t.Helper()
	b := brokertest.New(t)
	for path, a := range vb {
		b.Script(brokertest.Path(path), brokertest.Reply(a.status, a.body))
	}
	return fakeClient(t, Config{Endpoint: b.URL, Username: "u", Password: "p"}), b
}
