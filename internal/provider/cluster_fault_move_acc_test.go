package provider

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/queuey/terraform-provider-queuey/internal/broker"
	"github.com/queuey/terraform-provider-queuey/internal/brokertest"
	"github.com/queuey/terraform-provider-queuey/internal/mover"
	"github.com/queuey/terraform-provider-queuey/internal/topology"
)

// nodeDownBound is how long after the node's stop a move may take to stop
// with an error: the broker cancels the consumer of a queue whose node went
// down at once; should it not, the move's stall bound (15 s) and the wait
// for the close-ok (5 s) end it.
const nodeDownBound = 30 * time.Second

// nodeDownMove stops node n mid-move: the move's AMQP connection (through
// fp) is paused at a random byte offset of its traffic, n's RabbitMQ
// application stopped, and the connection resumed; run is the move, run in
// the background. It returns how long after the resume the move's error
// came, how long the stop took, and the error.
func nodeDownMove(t *testing.T, n testNode, fp faultProxies, offset int64, run func() error) (after, stop time.Duration, err error) {
	t.Helper()
	fp.amqp.Arm(brokertest.Fault{Kind: brokertest.FaultPause, After: offset})
	done := make(chan error, 1)
	go func() { done <- run() }()
	select {
	case <-fp.amqp.Struck():
	case err := <-done:
		t.Fatalf("the move ended before offset %d: %v", offset, err)
	}
	start := time.Now()
	n.ctl(t, "stop_app")
	stop = time.Since(start)
	resumed := time.Now()
	fp.heal()
	err = <-done
	return time.Since(resumed), stop, err
}

// TestAccCluster_faultMoveNodeDown stops, mid-move, the node of a 3-node
// cluster that hosts the queue the move takes from -- q.dead for the
// redrive, q for the move aside of a re-declaration -- while the move talks
// to another node; then starts it again. The move stops within
// nodeDownBound saying how many moved and where the rest wait, running it
// again finishes it, and every message is accounted for. (The resil stage's
// Terraform has no actions: the redrive runs on the client the action
// calls, mover.Mover.Move, through the same proxies.)
func TestAccCluster_faultMoveNodeDown(t *testing.T) {
	nodes := resilNodes(t, envClusterNodes, 3)
	c1, c2 := nodes[0], nodes[1]
	seed := faultSeed(t)
	rng := rand.New(rand.NewPCG(seed, 3))
	offset := func() int64 { return 32<<10 + rng.Int64N(600<<10) }
	t.Cleanup(func() { _ = c2.tryCtl("start_app") })
	t.Run("redrive", func(t *testing.T) { nodeDownRedrive(t, c1, c2, offset(), seed) })
	t.Run("redeclare", func(t *testing.T) { nodeDownRedeclare(t, c1, c2, offset(), seed) })
}

func nodeDownRedrive(t *testing.T, c1, c2 testNode, offset int64, seed uint64) {
	name := uniqueName("nd-redrive")
	via1, via2 := c1.client(t, -1), c2.client(t, -1)
	t.Cleanup(func() { deleteQueuesWithPrefix(via1, "/", name) })
	ctx := context.Background()
	if err := via1.DeclareQueue(ctx, "/", name, map[string]any{"x-message-ttl": 3600000}); err != nil {
		t.Fatal(err)
	}
	if err := via2.DeclareQueue(ctx, "/", name+".dead", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if q := waitState(t, via1, name+".dead", true); q.Node != c2.erlang {
		t.Fatalf("%s.dead lives on %s, want %s", name, q.Node, c2.erlang)
	}
	publishDead(t, amqpChannelAt(t, c2.amqpURL), name, faultMoveN, nil)

	fp := newFaultProxies(t, c1.amqpURL, c1.endpoint)
	mgmt, err := broker.New(broker.Config{Endpoint: "http://" + fp.mgmt.Addr,
		Username: defaultUser, Password: defaultPassword, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	client := moverOf(t, mgmt, "amqp://"+fp.amqp.Addr)
	redrive := mover.Move{Vhost: "/", From: name + ".dead", To: name}
	var moved int
	after, stop, err := nodeDownMove(t, c2, fp, offset, func() (err error) {
		moved, err = client.Move(ctx, redrive)
		return err
	})
	var me *mover.MoveError
	if !errors.As(err, &me) || moved != me.Moved {
		t.Errorf("the redrive with %s stopped: moved %d, %v; want a *mover.MoveError", c2.name, moved, err)
	} else if !strings.Contains(err.Error(), "RabbitMQ cancelled the consumer of "+name+".dead") {
		t.Errorf("the error does not say the broker cancelled the consumer: %v", err)
	} else if after > nodeDownBound {
		t.Errorf("the error came %.1fs after the node stopped, past the bound %s: %v", after.Seconds(), nodeDownBound, err)
	}
	t.Logf("the redrive with %s stopping: %v", c2.name, err)

	c2.ctl(t, "start_app")
	waitState(t, via1, name+".dead", true)
	waitNoConsumer(t, c1.amqpURL, name+".dead")
	again, err := client.Move(ctx, redrive)
	if err != nil {
		t.Errorf("the redrive once %s is back: %v", c2.name, err)
	}
	dups, lost := account(t, c1.amqpURL, name, name+".dead")
	fmt.Printf("==> fault stop_app of %s (hosts %s.dead)@offset %d (seed %d) × redrive %d × RabbitMQ 3-node cluster %s: "+
		"moved %d then error %.1fs after the stop (stop_app took %.1fs; bound %s); rerun moved %d; duplicates %d, lost %d\n",
		c2.name, name, offset, seed, faultMoveN, brokerLabel(), moved, after.Seconds(), stop.Seconds(), nodeDownBound, again, dups, lost)
	if lost > 0 {
		t.Errorf("%d messages lost", lost)
	}
}

func nodeDownRedeclare(t *testing.T, c1, c2 testNode, offset int64, seed uint64) {
	name := uniqueName("nd-redecl")
	via1 := c1.client(t, -1)
	t.Cleanup(func() { deleteQueuesWithPrefix(via1, "/", name) })
	// Declared through c2's management API, q and q.dead live on c2.
	creds := fmt.Sprintf("  username = %q\n  password = %q\n", defaultUser, defaultPassword)
	tf := newRedeclareCLI(t, name, fmt.Sprintf("  endpoint = %q\n", c2.endpoint)+creds)
	tf.configure("  message_ttl = \"1h\"\n  max_priority = 5\n")
	tf.mustRun("apply", "-auto-approve")
	if q := waitState(t, via1, name, true); q.Node != c2.erlang {
		t.Fatalf("%s lives on %s, want %s", name, q.Node, c2.erlang)
	}
	publishConfirmed(t, amqpChannelAt(t, c2.amqpURL), name, faultMoveN, jobMessage)

	// The change talks to c1, through the proxies.
	fp := newFaultProxies(t, c1.amqpURL, c1.endpoint)
	tf.provider = fp.provider + creds
	tf.configure(newSettings + "  keep_messages_on_change = true\n")
	var out string
	after, stop, err := nodeDownMove(t, c2, fp, offset, func() (err error) {
		out, err = tf.run("apply", "-auto-approve")
		return err
	})
	holding := topology.RedeclaringQueueName(name)
	outcome := "no error"
	if r := (faultRun{out: out, err: err, struck: true, elapsed: after}); err != nil {
		outcome = checkStopped(t, faultCase{name: "stop_app", bound: nodeDownBound}, r)
		if !saysWords(out, "RabbitMQ cancelled the consumer of "+name) {
			t.Errorf("the error does not say the broker cancelled the consumer:\n%s", out)
		}
	} else {
		t.Errorf("the change with %s stopping did not fail:\n%s", c2.name, out)
	}

	c2.ctl(t, "start_app")
	waitState(t, via1, name, true)
	waitNoConsumer(t, c1.amqpURL, name, holding)
	tf.mustRun("apply", "-auto-approve")
	if q, err := via1.GetQueue(context.Background(), "/", name, broker.Declared); err != nil {
		t.Error(err)
	} else if err := declaredAs(q, newTable); err != nil {
		t.Error(err)
	}
	dups, lost := account(t, c1.amqpURL, name, holding, name+".dead")
	fmt.Printf("==> fault stop_app of %s (hosts %s)@offset %d (seed %d) × redeclare %d (move aside) × RabbitMQ 3-node cluster %s: "+
		"%s (stop_app took %.1fs); rerun finished the change; duplicates %d, lost %d\n",
		c2.name, name, offset, seed, faultMoveN, brokerLabel(), outcome, stop.Seconds(), dups, lost)
	if lost > 0 {
		t.Errorf("%d messages lost", lost)
	}
}
