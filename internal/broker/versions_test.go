package broker

import (
	"net/http"
	"strings"
	"testing"
	"time"

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

// client starts a fake broker that answers the paths of vb as given, and
// returns a client of it.
func (vb versionBroker) client(t *testing.T) (*Client, *brokertest.Server) {
	t.Helper()
	b := brokertest.New(t)
	b.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		a, ok := vb[strings.TrimPrefix(r.URL.EscapedPath(), "/api/")]
		if ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(a.status)
			_, _ = w.Write([]byte(a.body))
		}
		return ok
	})
	return fakeClient(t, b, 5*time.Second), b
}
