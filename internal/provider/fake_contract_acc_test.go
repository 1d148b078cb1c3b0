package provider

import (
	"cmp"
	"crypto/tls"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// realContract is the acceptance tests' broker as the contracts' runners
// take it (stageContract); with no endpoint, contractSend sends to it.
type realContract = contractBroker

// TestAccFakeContract runs the contract of the fake on the broker: a row
// the broker answers otherwise than the fake in the broker's version fails
// here, and fails TestFakeContract once the row is made to say the truth.
func TestAccFakeContract(t *testing.T) {
	testAccPreCheck(t)
	runContract(t, stageContract(t), contractRows)
}

// stageContract is the acceptance stage's broker as the contracts' runners
// take it, in the version of the fake that models it.
func stageContract(t *testing.T) realContract {
	ov, err := accAdmin(t).Overview(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("RabbitMQ %s", ov.RabbitMQVersion)
	i := slices.IndexFunc(brokertest.Versions, func(v brokertest.Version) bool {
		return strings.HasPrefix(ov.RabbitMQVersion, string(v)+".")
	})
	if i < 0 {
		t.Fatalf("RabbitMQ %s: the fake models %v only; record this version's answers in internal/brokertest (versions.go) "+
			"and add it to brokertest.Versions", ov.RabbitMQVersion, brokertest.Versions)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: os.Getenv(EnvInsecure) == "true"}} //nolint:gosec // test brokers only
	return realContract{v: brokertest.Versions[i], endpoint: os.Getenv(EnvEndpoint), user: testUser(), pass: testPassword(),
		amqpURL:  cmp.Or(os.Getenv("RABBITMQ_AMQP_URL"), "amqp://127.0.0.1:5672"),
		http:     &http.Client{Transport: transport, Timeout: 30 * time.Second},
		addVhost: createVhost,
		consume: func(t *testing.T, vhost, queue string) {
			if _, err := amqpChannel(t, vhost).Consume(queue, "", false, false, false, false, nil); err != nil {
				t.Fatal(err)
			}
			waitConsumers(t, vhost, queue, 1)
		},
		refuseRead: func(t *testing.T, e *amqpEnv) {
			e.user, e.pass = uniqueName("contract-reader"), "contract-pw"
			createUser(t, e.user, e.pass, "", e.vhost, brokertest.Permissions{Configure: ".*", Write: ".*", Read: "^$"})
		},
	}
}
