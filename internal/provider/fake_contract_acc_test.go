package provider

import (
	"crypto/tls"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// realContract is the acceptance tests' broker as runContract takes it
// (TestAccFakeContract); with no endpoint, contractSend sends to it.
type realContract = contractBroker

// TestAccFakeContract runs the contract of the fake on the broker, in the
// version of the fake that models it: a row the broker answers otherwise than
// the fake in the broker's version fails here, and fails TestFakeContract once
// the row is made to say the truth.
func TestAccFakeContract(t *testing.T) {
	testAccPreCheck(t)
	ov := orFatal(accAdmin(t).Overview(t.Context()))(t)
	t.Logf("RabbitMQ %s", ov.RabbitMQVersion)
	i := slices.IndexFunc(brokertest.Versions, func(v brokertest.Version) bool {
		return strings.HasPrefix(ov.RabbitMQVersion, string(v)+".")
	})
	if i < 0 {
		t.Fatalf("RabbitMQ %s: the fake models %v only; record this version's answers in internal/brokertest (versions.go) "+
			"and add it to brokertest.Versions", ov.RabbitMQVersion, brokertest.Versions)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: os.Getenv(EnvInsecure) == "true"}} //nolint:gosec // test brokers only
	runContract(t, realContract{v: brokertest.Versions[i], endpoint: os.Getenv(EnvEndpoint), user: testUser(), pass: testPassword(),
		http:    &http.Client{Transport: transport, Timeout: 30 * time.Second},
		amqpURL: amqpURL, addVhost: createVhost,
		consumed: func(t *testing.T, vhost, queue string) { waitConsumers(t, vhost, queue, 1) },
		// Only in the row's own vhost, which createVhost deletes at the row's end, failed or not:
		// the user keeps configure and write there, and every permission elsewhere.
		refuseRead: func(t *testing.T, vhost, _ string) {
			p := brokertest.Permissions{Configure: ".*", Write: ".*", Read: "^$"}
			fatalOn(t, accAdmin(t).SetPermissions(t.Context(), vhost, testUser(), p))
		},
	})
}
