package provider

import (
	"testing"
)

// TestAccFakeAMQPContract runs the contract of the fake's AMQP port on the
// broker: a row the broker answers otherwise than the fake fails here.
func TestAccFakeAMQPContract(t *testing.T) {
	testAccPreCheck(t)
	runContract(t, stageContract(t), amqpRows)
}
