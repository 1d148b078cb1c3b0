package provider

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// realContract runs the contract rows (fake_contract_test.go) on the
// acceptance tests' broker.
type realContract struct {
	v    brokertest.Version
	http *http.Client
}

func (r realContract) version() brokertest.Version { return r.v }
func (r realContract) endpoint() string            { return os.Getenv(EnvEndpoint) }
func (r realContract) user() (string, string)      { return testUser(), testPassword() }
func (r realContract) client() *http.Client        { return r.http }

func (r realContract) addVhost(t *testing.T) string {
	name := uniqueName("contract")
	createVhost(t, name, "")
	return name
}

func (r realContract) publish(t *testing.T, vhost, queue string, n int) {
	if n > 0 {
		publish(t, amqpChannel(t, vhost), queue, n)
	}
}

func (r realContract) consume(t *testing.T, vhost, queue string, n int) {
	if n == 0 {
		return
	}
	ch := amqpChannel(t, vhost)
	for range n {
		if _, err := ch.Consume(queue, "", false, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	waitConsumers(t, vhost, queue, int64(n))
}

// TestAccFakeContract runs the contract of the fake on the broker: a row
// the broker answers otherwise than the fake in the broker's version fails
// here, and fails TestFakeContract once the row is made to say the truth.
func TestAccFakeContract(t *testing.T) {
	testAccPreCheck(t)
	runContract(t, stageContract(t))
}

// stageContract is the acceptance stage's broker as the contracts' runners
// take it, in the version of the fake that models it.
func stageContract(t *testing.T) realContract {
	ov, err := accAdmin(t).Overview(context.Background())
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
	return realContract{v: brokertest.Versions[i], http: &http.Client{Transport: transport, Timeout: 30 * time.Second}}
}
