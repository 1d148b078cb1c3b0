package provider

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// Settings that can never work fail the plan at once (default retry budget)
// with the cause and the fix.
func TestProvider_endpointMistakes(t *testing.T) {
	clearBrokerEnv(t)
	fake := brokertest.New(t)
	amqp := brokertest.RawListener(t, brokertest.AMQPGreeting)
	// atPlan: the error must come at plan (PlanOnly), not only at apply.
	tests := []struct {
		name, provider, want string
		atPlan               bool
	}{
		{"no username", `endpoint = "` + fake.URL + `"` + "\npassword = \"p\"",
			`(?s)Missing Management API Username.*set\s+.username.\s+in the provider "queuey"\s+block or the\s+RABBITMQ_USERNAME`, true},
		{"no password", `endpoint = "` + fake.URL + `"` + "\nusername = \"u\"",
			`(?s)Missing Management API Password.*RABBITMQ_PASSWORD`, true},
		{"the AMQP port", `endpoint = "http://` + amqp + `"` + "\nusername = \"u\"\npassword = \"p\"",
			`(?s)Wrong Management API Endpoint.*AMQP\s+port.*usually\s+on\s+port\s+15672`, false},
		{"an endpoint ending in /api", `endpoint = "` + fake.URL + `/api"` + "\nusername = \"u\"\npassword = \"p\"",
			`(?s)Wrong Management API Endpoint.*without\s+/api`, false},
		{"no scheme", `endpoint = "127.0.0.1:15672"`,
			`(?s)"127.0.0.1:15672"\s+has\s+no\s+scheme:\s+write\s+it\s+as\s+http://127.0.0.1:15672`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviderFactories,
				Steps: []resource.TestStep{{
					Config:      "provider \"queuey\" {\n" + tt.provider + "\n}\nresource \"queuey_queue\" \"q\" {\n  name = \"q\"\n}\n",
					PlanOnly:    tt.atPlan,
					ExpectError: regexp.MustCompile(tt.want),
				}},
			})
			// Terraform itself takes a second or two; a retried error takes 60s.
			if elapsed := time.Since(start); elapsed > 15*time.Second {
				t.Errorf("took %s", elapsed)
			}
		})
	}
}

// Refused credentials are explained in the first diagnostic of the process;
// the others point to it. Other errors are always given in full.
func TestExplainCredentialsOnce(t *testing.T) {
	d := &providerData{}
	refused := &broker.Error{Op: "reading vhost \"/\"", Endpoint: "http://x", Status: 401, Reason: "Login failed",
		Kind: broker.ErrUnauthorized, CredentialsRefused: true, Hint: "Authentication failed for user \"u\": check username and password"}
	other := &broker.Error{Op: "reading queue", Endpoint: "http://x", Status: 404, Kind: broker.ErrNotFound, Hint: "a hint"}
	got := []string{d.explain(other), d.explain(refused), d.explain(refused), d.explain(other)}
	for i, want := range []string{"a hint", "check username and password", "see that error, which says what to fix", "a hint"} {
		if !strings.Contains(got[i], want) {
			t.Errorf("explanation %d: %q lacks %q", i, got[i], want)
		}
	}
	if strings.Contains(got[2], "check username") {
		t.Errorf("the second explanation repeats the hint: %q", got[2])
	}
}
