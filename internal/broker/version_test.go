package broker

import (
	"context"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// The version is what the broker answers, read once for the client's life however often asked.
func TestVersion_readOnce(t *testing.T) {
	t.Parallel()
	for v, want := range map[brokertest.Version]string{brokertest.V310: "3.10.8", brokertest.V40: "4.0.5", brokertest.V43: "4.3.6"} {
		s := brokertest.New(t)
		s.AnswerAs(v)
		c := fakeClient(t, Config{Endpoint: s.URL, Username: "u", Password: "p"})
		for range 3 {
			got, err := c.Version(context.Background())
			if err != nil || got != want {
				t.Fatalf("%s: Version = %q, %v, want %q", v, got, err, want)
			}
		}
		if n := len(s.RequestsMatching("GET overview")); n != 1 {
			t.Errorf("%s: %d reads of the overview, want 1: %v", v, n, s.Requests())
		}
	}
}
