package provider

import (
	"cmp"
	"os"
	"testing"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// realAMQPContract runs the AMQP rows (fake_amqp_contract_test.go) on the
// acceptance tests' broker.
type realAMQPContract struct{ realContract }

func (r realAMQPContract) amqpURL(vhost, user, password string) string {
	return withLogin(cmp.Or(os.Getenv("RABBITMQ_AMQP_URL"), "amqp://127.0.0.1:5672"), vhost, user, password)
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
	runAMQPContract(t, realAMQPContract{stageContract(t)})
}
