package provider

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// realAMQPContract runs the AMQP rows (fake_amqp_contract_test.go) on the
// acceptance tests' broker.
type realAMQPContract struct{ realContract }

func (r realAMQPContract) amqpURL(vhost, user, password string) string {
	base := os.Getenv("RABBITMQ_AMQP_URL")
	if base == "" {
		base = "amqp://127.0.0.1:5672"
	}
	return withLogin(base, vhost, user, password)
}

func (r realAMQPContract) readRefused(t *testing.T, vhost, _ string) (string, string) {
	user, pass := uniqueName("contract-reader"), "contract-pw"
	createUser(t, user, pass, "", vhost, brokertest.Permissions{Configure: ".*", Write: ".*", Read: "^$"})
	return user, pass
}

// TestAccFakeAMQPContract runs the contract of the fake's AMQP port on the
// broker: a row the broker answers otherwise than the fake fails here.
func TestAccFakeAMQPContract(t *testing.T) {
	testAccPreCheck(t)
	ov, err := accAdmin(t).Overview(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("RabbitMQ %s", ov.RabbitMQVersion)
	var v brokertest.Version
	for _, known := range brokertest.Versions {
		if strings.HasPrefix(ov.RabbitMQVersion, string(known)+".") {
			v = known
		}
	}
	if v == "" {
		t.Fatalf("RabbitMQ %s: the fake models %v only; record this version's answers in internal/brokertest (versions.go) "+
			"and add it to brokertest.Versions", ov.RabbitMQVersion, brokertest.Versions)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: os.Getenv(EnvInsecure) == "true"}} //nolint:gosec // test brokers only
	runAMQPContract(t, realAMQPContract{realContract{v: v, http: &http.Client{Transport: transport, Timeout: 30 * time.Second}}})
}
