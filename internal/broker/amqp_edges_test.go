package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
)

// An interrupt (a cancel, not a deadline the handshake already has) ends an
// AMQP handshake that the server never answers at once, not at the dial
// timeout.
func TestAMQPDialCancelled(t *testing.T) {
	t.Parallel()
	c := amqpClient(t, "amqp://"+brokertest.SilentListener(t))
	c.amqp.timeout = 10 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.PurgeQueue(ctx, "/", "orders.dead")
	if took := time.Since(start); took > 3*time.Second || !errors.Is(err, context.Canceled) {
		t.Errorf("an interrupted handshake: %v after %s, want context.Canceled at once", err, took)
	}
}
